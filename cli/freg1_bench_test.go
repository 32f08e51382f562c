package cli

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"
)

// freg1DirectBench runs `airnode bench --json` for 5 s against the direct
// URL of a provider SIGTERMed 1.5 s in, restarted on its port when
// restart is set, and returns what --json counts.
func freg1DirectBench(t *testing.T, restart bool) (up, asked, restarted, left int) {
	t.Helper()
	dir := t.TempDir()
	opts := []string{"-p", "warmup=0", "--shutdown-wait", "300ms"}
	p := serve(t, "127.0.0.1:0", dir, opts...)
	b, out, errb := benchStart(t, "--duration", "5s", "--timeout", "1s", "-c", "2", "--json", p.url("demo.Echo"))
	time.Sleep(1500 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, 15*time.Second); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM", code)
	}
	if restart {
		serve(t, p.addr, dir, opts...)
	}
	_ = b.Wait() // exits 1: calls failed while the provider was away
	var o struct {
		Errors    map[string]int `json:"errors"`
		Up        int            `json:"connections_up"`
		Asked     int            `json:"connections_asked"`
		Restarted *int           `json:"providers_restarted"`
		Left      *int           `json:"providers_left"`
	}
	if err := json.Unmarshal(out.Bytes(), &o); err != nil || o.Restarted == nil || o.Left == nil {
		t.Fatalf("bench --json: %v:\n%s\n%s", err, out.String(), errb.String())
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
