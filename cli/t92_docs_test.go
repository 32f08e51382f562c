package cli

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestT92_DocsSayWhatHappens (tester92 #3): the README said a bad -p
// shutdown.wait makes serve exit 1, bench --help that a --json run
// failing on a bad flag value exits 1 (both exit 2, a usage error, as
// the exit table says) and that the stall warning comes after "a second"
// (stallBound's floor is 2 s). The texts now say what the binary does,
// checked against the binary and against stallBound's constants.
func TestT92_DocsSayWhatHappens(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(readme)), " ")
	if !strings.Contains(text, "a bad value makes serve exit 2 at start") || strings.Contains(text, "makes serve exit 1 at start") {
		t.Errorf("README: want -p shutdown.wait's bad value to exit 2 at start")
	}
	expectServeRefusedCode(t, exitUsage, []string{"-p", "shutdown.wait=abc"}, `invalid value "abc" for URL key "shutdown.wait"`)

	help := strings.Join(strings.Fields(runCommand(t, 20*time.Second, nil, "bench", "--help").stdout), " ")
	if !strings.Contains(help, "exit 2 (a usage error) for a bad flag value, an unknown flag or a missing SERVICE_URL") ||
		strings.Contains(help, `on stdout, exit 1.`) {
		t.Errorf("bench --help: want --json's early failure on a bad flag value to exit 2:\n%s", help)
	}
	r := runCommand(t, 20*time.Second, nil, "bench", "--json", "--registry", "file://"+t.TempDir(), "demo.Echo", "-c", "0")
	if r.code != exitUsage || !strings.Contains(r.stdout, `"calls": 0`) {
		t.Errorf("bench --json -c 0: exit %d, stdout %q; want exit 2 and the error object", r.code, r.stdout)
	}
	stall := fmt.Sprintf("for longer than %d times the longest call finished so far (at least %v), or than twice the call timeout (at least %v)",
		stallSlower, secondsText(stallFloor), secondsText(stallTimeoutFloor))
	if !strings.Contains(help, stall) || strings.Contains(help, "in flight for a second") {
		t.Errorf("bench --help: want the stall bound %q:\n%s", stall, help)
	}
}

// secondsText is d as the help texts write whole seconds: "2 s".
func secondsText(d time.Duration) string { return fmt.Sprintf("%d s", int(d.Seconds())) }
