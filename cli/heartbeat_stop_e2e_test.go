package cli

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A provider paused by SIGSTOP for a few heartbeat intervals and resumed
// by SIGCONT, with an idle dual consumer: the dual consumer used to ping
// at every tick (interval/3) while the provider was silent, so the
// resumed provider read a burst of queued pings at once and warned
// "consumer pings much faster than its advertised heartbeat.interval",
// then closed the channel for "too many pings"; and once the late answer
// came, it pinged again at once (the queued ping had been written long
// before). The consumer keeps one ping unanswered per channel and counts
// a late answer as a write: no warning, no close, calls go on.
//
// "kept": the pause (2 s) is shorter than the consumer's
// heartbeat.timeout (5 s): the channel stays. "redialled": the pause
// (2.5 s) is longer than the consumer's timeout (900 ms): the consumer
// redials the stopped provider (the listen backlog accepts) and each new
// connection holds the kernel's first ping. No call is made from the
// SIGSTOP until the log is read (a request resets the guard's count).
// The flood guard itself is unchanged: TestDualFloodStillClosedByTheGuard.
func TestDualPausedProviderReadsNoPingFlood(t *testing.T) {
	for _, c := range []struct {
		name, timeout string
		pause         time.Duration
	}{
		{"kept", "5s", 2 * time.Second},
		{"redialled", "900ms", 2500 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			keys := "heartbeat=dual&heartbeat.interval=300ms&heartbeat.timeout=" + c.timeout
			p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "heartbeat=dual", "-p", "heartbeat.interval=300ms",
				"-p", "heartbeat.timeout="+c.timeout, "-p", "heartbeat.min.ping.interval=200ms")
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
			time.Sleep(c.pause)
			if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			time.Sleep(1500 * time.Millisecond) // the queued frames are read, pings go on: 5 intervals
			log := p.logText()
			for _, bad := range []string{"pings much faster", "too many pings"} {
				if strings.Contains(log, bad) {
					t.Errorf("after SIGSTOP/SIGCONT the provider logged %q:\n%s", bad, log)
				}
			}
			if c.name == "kept" && strings.Contains(log, "channel closed") {
				t.Errorf("the provider closed the consumer's channel:\n%s", log)
			}
			cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
			defer ccancel()
			if _, err := r.Invoke(cctx, "Echo", 2); err != nil {
				t.Fatalf("call after SIGCONT: %v", err)
			}
		})
	}
}

// A dual consumer set to ping faster (30 ms) than the provider's
// heartbeat.min.ping.interval (300 ms) pings at the provider's minimum
// once it has its hello, so the provider's ping-flood guard never closes
// it, and calls go on (the guard itself, against a consumer that floods
// regardless: kernel/exchange TestPingFlood_*).
func TestDualConsumerPingsAtTheProvidersMinimum(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "heartbeat=dual", "-p", "heartbeat.interval=300ms", "-p", "heartbeat.min.ping.interval=300ms")
	r := refer(t, p.url("demo.Echo")+"?heartbeat=dual&heartbeat.interval=30ms")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := r.Invoke(ctx, "Echo", 1); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // idle: 30 ms pings would strike out at once
	if log := p.logText(); strings.Contains(log, "too many pings") || strings.Contains(log, "channel closed") {
		t.Fatalf("the provider closed the consumer pinging at its minimum:\n%s", log)
	}
	if _, err := r.Invoke(ctx, "Echo", 2); err != nil {
		t.Fatal(err)
	}
}
