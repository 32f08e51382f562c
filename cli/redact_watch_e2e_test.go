package cli

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// Tester8 finding: `registry watch` printed a provider's token in clear,
// the output people paste into tickets; serve, call and bench redact it.
// Added and removed lines both show token=***.
func TestRegistryWatchRedactsTheToken(t *testing.T) {
	t.Parallel()
	reg := "file://" + t.TempDir()
	w := startWatch(t, reg, "demo.Echo")
	p := serveWith(t, "127.0.0.1:0", reg, "-p", "token=s3cret", "--shutdown-wait", "0s")
	w.waitLine(t, plus(p.addr), time.Time{}, 10*time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	w.waitLine(t, minus(p.addr), time.Time{}, 10*time.Second)
	out := w.text()
	if strings.Contains(out, "s3cret") || strings.Count(out, "token=***") != 2 {
		t.Errorf("watch output should show the token as *** on both lines and never in clear:\n%s", out)
	}
}

// Tester8 finding: list --explain printed the token in its url line.
func TestListExplainRedactsTheToken(t *testing.T) {
	code, out, errOut := airnode(t, nil, "list", "--explain", "airnode://127.0.0.1:1/demo.Echo?token=s3cret&Echo.token=m3thod")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out+errOut, "s3cret") || strings.Contains(out+errOut, "m3thod") || !strings.Contains(out, "token=***") {
		t.Errorf("list --explain should show token=*** and never the secret:\n%s\n%s", out, errOut)
	}
}
