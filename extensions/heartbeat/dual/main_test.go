package dual_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/heartbeat/internal/task"
)

// TestMain checks that every test stopped every heartbeat goroutine
// (goleak) and every heartbeat timer (task.Armed).
func TestMain(m *testing.M) {
	code := m.Run()
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
