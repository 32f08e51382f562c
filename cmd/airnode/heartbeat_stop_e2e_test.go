package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A provider paused by SIGSTOP for a few heartbeat intervals and resumed
// by SIGCONT, with a dual consumer: the dual consumer used to ping at
// every tick (interval/3) while the provider was silent, so the resumed
// provider read a burst of queued pings at once and warned "consumer
// pings much faster than its advertised heartbeat.interval", then closed
// the channel for "too many pings". The consumer keeps one ping
// unanswered per channel: no warning, no close, and calls go on. The
// flood guard itself is unchanged: TestDualFloodStillClosedByTheGuard.
func TestDualPausedProviderReadsNoPingFlood(t *testing.T) {
	// heartbeat.timeout 5s: the consumer keeps its channel through the
	// 2 s stop (7 intervals), as it would through a pause shorter than its
	// timeout. (A pause past it makes the consumer redial the stopped
	// provider; the listen backlog accepts, and each new connection's
	// first ping stays unanswered: dual's TestDualNoPingWhileTheFirstPingIsUnanswered.)
	const keys = "heartbeat=dual&heartbeat.interval=300ms&heartbeat.timeout=5s"
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "heartbeat=dual", "-p", "heartbeat.interval=300ms", "-p", "heartbeat.timeout=5s",
		"-p", "heartbeat.min.ping.interval=200ms")
	r := refer(t, p.url("demo.Echo")+"?"+keys)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.Invoke(ctx, "Echo", 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // a few answered pings each way
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	_, err := r.Invoke(cctx, "Echo", 2)
	ccancel()
	if err != nil {
		t.Fatalf("call after SIGCONT: %v", err)
	}
	time.Sleep(time.Second) // the queued frames are read, pings go on
	log := p.logText()
	for _, bad := range []string{"pings much faster", "too many pings", "channel closed"} {
		if strings.Contains(log, bad) {
			t.Errorf("after SIGSTOP/SIGCONT the provider logged %q:\n%s", bad, log)
		}
	}
}

// A consumer that does ping faster than the provider's
// heartbeat.min.ping.interval with no call between is still closed by the
// provider's ping-flood guard, with its warning.
func TestDualFloodStillClosedByTheGuard(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "heartbeat=dual", "-p", "heartbeat.interval=300ms", "-p", "heartbeat.min.ping.interval=300ms")
	r := refer(t, p.url("demo.Echo")+"?heartbeat=dual&heartbeat.interval=30ms")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.Invoke(ctx, "Echo", 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the provider's too-many-pings close", func() bool { return strings.Contains(p.logText(), "too many pings") })
}
