package cli

import (
	"runtime"
	"strings"
	"testing"
)

// `airnode version` and `airnode --version` say which build this is (the
// processes of a fleet being upgraded across builds could not be told
// apart); a version set at link time wins.
func TestVersionCommandAndFlag(t *testing.T) {
	code, out, errOut := runCLI(t, []string{"version"})
	if code != 0 || !strings.HasPrefix(out, "airnode ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("version: exit %d, %q, stderr %q", code, out, errOut)
	}
	first := strings.SplitN(out, "\n", 2)[0]
	code, out, errOut = runCLI(t, []string{"--version"})
	if code != 0 || strings.TrimSpace(out) != first {
		t.Fatalf("--version: exit %d, %q (stderr %q), want %q", code, out, errOut, first)
	}
	defer func(v string) { version = v }(version)
	version = "v9.9.9"
	if got := buildVersion(); got != "v9.9.9" {
		t.Fatalf("buildVersion with -X cli.version=v9.9.9: %q", got)
	}
}
