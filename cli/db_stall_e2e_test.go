package cli

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"
)

// fix-db: a provider process that is stopped for 2 s, or 3 s, and then
// resumed (SIGSTOP, SIGCONT: a CPU-starved host stalls a healthy process
// so), under bench's 8 callers with a 10 s timeout, answers every call late
// and keeps its connection: the consumer's quiet watch pings a connection
// only after max(3 s, half the calls' timeout) with nothing read
// (exchange.QuietBound, 5 s here), so such a stall fails no call
// CHANNEL_INACTIVE. fix-da's fixed 1 s bound with a 1 s ping closed it
// after 2-2.5 s of silence.
func TestDB_StalledProviderKeepsItsCalls(t *testing.T) {
	for _, stall := range []time.Duration{2 * time.Second, 3 * time.Second} {
		t.Run(stall.String(), func(t *testing.T) {
			p := serve(t, "127.0.0.1:0", t.TempDir())
			cmd, out, errb := benchStart(t, p.url("demo.Echo"), "--timeout", "10s", "--duration", "6s", "-c", "8", "--warmup", "0", "--json")
			time.Sleep(1500 * time.Millisecond)
			p.stopFor(t, stall)
			err := cmd.Wait()
			var o struct {
				Calls  int64            `json:"calls"`
				OK     int64            `json:"ok"`
				Errors map[string]int64 `json:"errors"`
			}
			if jerr := json.Unmarshal(out.Bytes(), &o); jerr != nil {
				t.Fatalf("bench: %v; stdout %q: %v\nstderr %s", err, out.String(), jerr, errb.String())
			}
			if err != nil || o.OK == 0 || o.Calls != o.OK || len(o.Errors) != 0 {
				t.Fatalf("bench: %v; %d calls, %d ok, errors %v: want every call ok after a %v stall\nstderr %s",
					err, o.Calls, o.OK, o.Errors, stall, errb.String())
			}
			t.Logf("%v stall: %d calls, all ok", stall, o.Calls)
		})
	}
}

// stopFor stops the provider's process (SIGSTOP) for d, then resumes it
// (SIGCONT).
func (p *provider) stopFor(t *testing.T, d time.Duration) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}
