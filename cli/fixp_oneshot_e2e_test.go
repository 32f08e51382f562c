package cli

import (
	"strings"
	"testing"
	"time"
)

// TestFixP_OneShotCallNoReconnectingWarn (fix-p): airnode call, a
// one-shot consumer (kernel.WithOneShot), whose provider is killed while
// the call runs fails CHANNEL_INACTIVE (exit 1) and logs no Warn "kernel:
// channel closed; reconnecting": it reconnects for nobody. bench, a
// long-lived consumer, still logs that Warn for the same kill.
func TestFixP_OneShotCallNoReconnectingWarn(t *testing.T) {
	t.Parallel()
	const warn = `level=WARN msg="channel closed; reconnecting"`
	killDuring := func(t *testing.T, sub string, args func(p *provider) []string) result {
		p := startServe(t, "127.0.0.1:0", "memory://", noAirnodeEnv, t.TempDir())
		done := make(chan result, 1)
		go func() { done <- runCommand(t, 60*time.Second, nil, sub, args(p)...) }()
		time.Sleep(2 * time.Second) // connected, the call in flight (a loaded machine: generous)
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		return <-done
	}
	t.Run("call", func(t *testing.T) {
		t.Parallel()
		r := killDuring(t, "call", func(p *provider) []string {
			return []string{"--timeout", "30s", p.url("demo.Echo"), "Sleep", "20000"}
		})
		expectFail(t, r, "CHANNEL_INACTIVE: ", "closed by peer")
		if strings.Contains(r.stderr, "reconnecting") {
			t.Errorf("one-shot call logged a reconnect:\n%s", r.stderr)
		}
	})
	t.Run("bench", func(t *testing.T) {
		t.Parallel()
		r := killDuring(t, "bench", func(p *provider) []string {
			return []string{"--duration", "5s", "-c", "1", "--timeout", "10s", p.url("demo.Echo")}
		})
		if !strings.Contains(r.stderr, warn) {
			t.Errorf("bench (a long-lived consumer) exit %d, stderr has no %s:\n%s", r.code, warn, r.stderr)
		}
	})
}
