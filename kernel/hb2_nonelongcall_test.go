package kernel

import (
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// nu45 finding 8: an idle provider closes a heartbeat=none consumer's
// connection after its heartbeat.timeout with nothing read or written,
// also while a call on it runs (none sends nothing during it). The call
// used to fail only "closed by peer (... the provider may have run it)";
// the provider now answers it before closing, CHANNEL_INACTIVE naming
// the call, heartbeat.timeout and heartbeat=none, and still logs the
// close at INFO with cancelled_requests=1. An idle consumer, which pings
// during the call, keeps it.
func TestNoneConsumerLongCallCutIsExplained(t *testing.T) {
	for _, tr := range []string{"tcp", "smux"} {
		t.Run(tr, func(t *testing.T) {
			t.Parallel()
			plogs, _, r := loggedEchoPair(t, "transport="+tr+"&heartbeat.interval=500ms&heartbeat.timeout=1500ms",
				"transport="+tr+"&heartbeat=none&timeout=10s")
			start := time.Now()
			_, err := r.Invoke(ctxT(t), "Sleep", 5000)
			took := time.Since(start)
			t.Logf("failed after %v: %v", took.Round(time.Millisecond), err)
			if st := spi.StatusOf(err); st != spi.StatusChannelInactive {
				t.Fatalf("Sleep(5000) on a none consumer: %v (status %v), want CHANNEL_INACTIVE", err, st)
			}
			if took < 1400*time.Millisecond || took > 4*time.Second {
				t.Errorf("cut after %v, want about the provider's heartbeat.timeout 1.5s", took)
			}
			for _, want := range []string{"the provider closed the connection while demo.Echo.Sleep was running", "(heartbeat.timeout 1.5s)", "the consumer runs heartbeat=none", "nor while a call runs"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not say %q: %v", want, err)
				}
			}
			if strings.Contains(err.Error(), "closed by peer") {
				t.Errorf("error is still the bare close: %v", err)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(plogs.String(), `msg="channel closed"`) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			pl := plogs.String()
			if !strings.Contains(pl, `level=INFO msg="channel closed"`) || !strings.Contains(pl, "the consumer runs heartbeat=none") || !strings.Contains(pl, "cancelled_requests=1") {
				t.Errorf("provider's close is not an INFO naming heartbeat=none with cancelled_requests=1:\n%s", pl)
			}
		})
	}
	t.Run("idle keeps it", func(t *testing.T) {
		t.Parallel()
		_, _, r := loggedEchoPair(t, "heartbeat.interval=500ms&heartbeat.timeout=1500ms", "heartbeat=idle&heartbeat.interval=500ms&timeout=10s")
		if _, err := r.Invoke(ctxT(t), "Sleep", 2500); err != nil {
			t.Fatalf("Sleep(2500) on an idle consumer pinging every 500ms: %v", err)
		}
	})
}
