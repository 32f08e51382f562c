package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if q, ok := os.LookupEnv(childEnv); ok {
		runChild(q)
		return
	}
	code := m.Run()
	if airnodeBin != "" {
		os.RemoveAll(filepath.Dir(airnodeBin))
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
