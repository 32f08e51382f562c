package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/heartbeat/internal/task"
)

// TestMain runs the child provider when asked to, else the tests, then
// checks that no heartbeat goroutine (goleak) or timer (task.Armed) is left.
func TestMain(m *testing.M) {
	if q, ok := os.LookupEnv(childEnv); ok {
		runChild(q)
		return
	}
	if q, ok := os.LookupEnv(consumerChildEnv); ok {
		runConsumerChild(q)
		return
	}
	code := m.Run()
	if airnodeBin != "" {
		os.RemoveAll(filepath.Dir(airnodeBin))
	}
	if code == 0 {
		if n := task.Armed(); n != 0 {
			fmt.Fprintf(os.Stderr, "%d heartbeat timers still armed after the tests\n", n)
			code = 1
		}
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
