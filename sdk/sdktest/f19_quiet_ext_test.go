package sdktest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/lb/random"
	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/sdk/sdktest"
)

// tester F19: the harness printed go-plugin's DEBUG lines ("[DEBUG]
// stdio: received EOF, stopping recv loop ...") around every test into
// `go test -v` output, where they look like errors to a plugin author.
// A `go test -v` run of a harness test (this test binary, run again for
// TestF19Child alone) prints no such line.
func TestF19HarnessPrintsNoDebugLines(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestF19Child$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "SDKTEST_F19_CHILD=1", testbin.NoExitSleep())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestF19Child") {
		t.Fatalf("child test: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "[DEBUG]") || strings.Contains(string(out), "stdio") {
		t.Fatalf("go test -v of a harness test prints go-plugin's debug lines:\n%s", out)
	}
}

// TestF19Child runs the harness for TestF19HarnessPrintsNoDebugLines.
func TestF19Child(t *testing.T) {
	if os.Getenv("SDKTEST_F19_CHILD") != "1" {
		t.Skip("run by TestF19HarnessPrintsNoDebugLines")
	}
	t.Run("balancer", func(t *testing.T) { sdktest.TestLoadBalance(t, random.New()) })
}
