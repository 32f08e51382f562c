package cli

import (
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testaddr"
)

// freg1DirectBench runs `airnode bench --json` against the direct URL of
// a provider SIGTERMed once it has served bench's calls, restarted on its
// port (held for the test's life) when restart is set, and returns what
// --json counts. The run is planned for 40 s and ended by SIGINT once
// bench has logged what the counts depend on: the channel the provider
// closed as it shut down and, when restarted, the connection to the new
// process. A run planned for 5 s ended before the restarted serve was up
// on a loaded machine, and reported it left.
func freg1DirectBench(t *testing.T, restart bool) (up, asked, restarted, left int) {
	t.Helper()
	dir := t.TempDir()
	opts := []string{"-p", "warmup=0", "--shutdown-wait", "300ms"}
	// the access log says bench's calls reach it (the restarted one logs
	// none: a line per call of a closed loop slows it down)
	p := serve(t, testaddr.Reserved(t), dir, append(opts, "-p", "accesslog=true")...)
	b, out, errb := benchStart(t, "--duration", "40s", "--warmup", "0", "--timeout", "1s", "-c", "2", "--json", "--log-level", "info", p.url("demo.Echo"))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("bench stderr:\n%s", errb.String())
		}
	})
	waitWithin(t, "bench's first call in the provider's access log", 30*time.Second, func() bool {
		return strings.Contains(p.logText(), "msg=access component=accesslog side=provider")
	})
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM", code)
	}
	waitWithin(t, "bench's record of the channel the provider closed as it shut down", 30*time.Second, func() bool {
		return strings.Contains(errb.String(), "provider_shutting_down=true")
	})
	if restart {
		serve(t, p.addr, dir, opts...)
		waitWithin(t, "bench's connection to the restarted provider", 30*time.Second, func() bool {
			return strings.Contains(errb.String(), `msg="reconnected to provider" component=kernel provider=`+p.addr+" ")
		})
	}
	if err := b.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	_ = b.Wait() // exits 130: interrupted
	var o struct {
		Interrupted bool           `json:"interrupted"`
		Errors      map[string]int `json:"errors"`
		Up          int            `json:"connections_up"`
		Asked       int            `json:"connections_asked"`
		Restarted   *int           `json:"providers_restarted"`
		Left        *int           `json:"providers_left"`
	}
	if err := json.Unmarshal(out.Bytes(), &o); err != nil || o.Restarted == nil || o.Left == nil || !o.Interrupted {
		t.Fatalf("bench --json, interrupted after the events: %v:\n%s\n%s", err, out.String(), errb.String())
	}
	t.Logf("restart %v: errors %v, connections %d of %d, restarted %d, left %d", restart, o.Errors, o.Up, o.Asked, *o.Restarted, *o.Left)
	return o.Up, o.Asked, *o.Restarted, *o.Left
}

// Tester46 finding 6: bench against a direct URL whose provider was
// SIGTERMed and never came back counted it in providers_restarted (its
// closed channel stopped saying it was leaving, and a direct list never
// unlists it). It is providers_left now; a provider restarted on the same
// port, which bench's reference reconnects to, is still restarted.
func TestFreg1_BenchDirectProviderStoppedIsLeftNotRestarted(t *testing.T) {
	if up, asked, restarted, left := freg1DirectBench(t, false); restarted != 0 || left != 1 || up != 0 || asked != 0 {
		t.Errorf("stopped, never back: connections %d of %d, restarted %d, left %d; want 0 of 0, 0, 1", up, asked, restarted, left)
	}
	if up, asked, restarted, left := freg1DirectBench(t, true); restarted != 1 || left != 0 || up != 1 || asked != 1 {
		t.Errorf("restarted on its port: connections %d of %d, restarted %d, left %d; want 1 of 1, 1, 0", up, asked, restarted, left)
	}
}
