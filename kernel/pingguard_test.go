package kernel

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// A provider exported with heartbeat.interval=200ms (its consumers ping
// that often) accepts pings that often: a 1.5 s call returns and an idle
// connection stays up, where the ping-flood guard's fixed 1 s minimum
// closed both (new-user tester: "too many pings", CHANNEL_INACTIVE after
// 0.8 s, reconnecting every 1.5 s).
func TestShortHeartbeatIntervalKeepsCallsAndConnections(t *testing.T) {
	plogs, clogs, r := loggedEchoPair(t, "heartbeat.interval=200ms", "heartbeat.interval=200ms&timeout=5s")
	if _, err := r.Invoke(ctxT(t), "Sleep", 1500); err != nil {
		t.Fatalf("1.5 s call with 200 ms heartbeats: %v", err)
	}
	time.Sleep(1500 * time.Millisecond) // idle: the consumer pings every 200 ms
	if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{plogs.String(), clogs.String()} {
		for _, bad := range []string{"too many pings", "reconnecting", "below the provider's"} {
			if strings.Contains(l, bad) {
				t.Errorf("log has %q:\n%s", bad, l)
			}
		}
	}
}

// A consumer configured to ping faster than its provider allows (its
// heartbeat.interval under the provider's heartbeat.min.ping.interval,
// 1 s by default) pings at the provider's minimum once it knows it, with
// one warning, instead of having its idle connection closed for "too many
// pings" and redialled every second (tester7), with either bundled
// heartbeat.
func TestConsumerPingsNoFasterThanTheProviderAllows(t *testing.T) {
	for _, hb := range []string{"idle", "dual"} {
		t.Run(hb, func(t *testing.T) {
			plogs, clogs, r := loggedEchoPair(t, "heartbeat="+hb, "heartbeat="+hb+"&heartbeat.interval=200ms")
			if _, err := r.Invoke(ctxT(t), "Echo", 1); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * time.Second) // idle: 200 ms pings would strike out within a second
			if _, err := r.Invoke(ctxT(t), "Echo", 2); err != nil {
				t.Fatal(err)
			}
			if l := plogs.String(); strings.Contains(l, "too many pings") {
				t.Errorf("provider log:\n%s", l)
			}
			l := clogs.String()
			if strings.Contains(l, "reconnecting") || strings.Count(l, "below the provider's heartbeat.min.ping.interval") != 1 {
				t.Errorf("consumer log (want one warning, no reconnect):\n%s", l)
			}
		})
	}
}

// loggedEchoPair exports demo.Echo on a provider node at
// airnode://127.0.0.1:0/demo.Echo?exportQuery and refers to it from a
// consumer node with the reference query referQuery; each node logs (text)
// into the buffer returned for it. Both nodes close at cleanup.
func loggedEchoPair(t *testing.T, exportQuery, referQuery string) (plogs, clogs *logbuf.Buffer, r *Reference) {
	t.Helper()
	plogs, clogs = new(logbuf.Buffer), new(logbuf.Buffer)
	p := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(plogs, nil))), WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+exportQuery))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(clogs, nil))))
	t.Cleanup(func() { _ = c.Close() })
	r, err = c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?"+referQuery), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	return plogs, clogs, r
}
