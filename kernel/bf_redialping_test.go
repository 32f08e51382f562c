package kernel

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// tester84 #9: a consumer whose provider hangs (a real provider behind a
// loopback proxy, paused) had its connection closed by its heartbeat
// (one heartbeat close, rightly), then every redial's first ping went
// unanswered until the heartbeat gave up on it, and each such attempt
// was counted a second heartbeat close (airnode_channels_idle_closed_total)
// and logged as "this consumer closed the connection": a connection the
// heartbeat ended. Each is now a failed connection attempt only
// (connect_failures{reason="heartbeat"}), and its record says that the
// connection was never up.
func TestBF_RedialWithUnansweredFirstPingIsAFailedAttempt(t *testing.T) {
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), whoService{}, spi.MustParse("airnode://127.0.0.1:0/t.Who"))
	if err != nil {
		t.Fatal(err)
	}
	px := testproxy.New(t, e.URL().Address())
	var logs syncBuffer
	c := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))), WithShutdownWait(0))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+px.Addr()+"/t.Who?heartbeat.interval=50ms&connect.timeout=5s&reconnect.backoff=50ms")
	if !r.WaitReady(ctxT(t)) {
		t.Fatal("not connected")
	}
	idle0, hb0 := counters.Heartbeat.IdleClosed.Load(), counters.Transport.ConnectHeartbeat.Load()
	px.Pause(true) // the provider looks hung: the live connection and every redial
	deadline := time.Now().Add(15 * time.Second)
	for counters.Transport.ConnectHeartbeat.Load()-hb0 < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = c.Close()
	idle, hb := counters.Heartbeat.IdleClosed.Load()-idle0, counters.Transport.ConnectHeartbeat.Load()-hb0
	if hb < 3 || idle != 1 {
		t.Errorf("heartbeat closes +%d, connect failures (heartbeat) +%d; want 1 close (the live connection) and at least 3 failed attempts (the redials)\n%s", idle, hb, logs.String())
	}
	out := logs.String()
	if strings.Contains(out, "this consumer closed the connection during the first ping") ||
		!strings.Contains(out, "nothing answered the first ping: this consumer's heartbeat gave up on it after") ||
		!strings.Contains(out, "the connection was never up: a failed connection attempt, redialed with backoff") {
		t.Errorf("the redials' records do not say the attempt failed:\n%s", out)
	}
}
