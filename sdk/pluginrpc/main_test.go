package pluginrpc

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// MoodyBinary is the path of the testdata/moody plugin, built by TestMain
// for the external tests that run it as a real plugin process.
var MoodyBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pluginrpc-test-")
	if err != nil {
		panic(err)
	}
	MoodyBinary = filepath.Join(dir, "moody")
	cmd := exec.Command("go", "build", "-o", MoodyBinary, "./testdata/moody")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the test plugin:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
