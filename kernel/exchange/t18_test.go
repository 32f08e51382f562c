package exchange

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// tester18 N3: closes by the exchange's guards are counted by reason
// class, each once: a silent connection under first_frame_timeout (not as
// a heartbeat close), 16 zero bytes under protocol_error, a ping flood
// under too_many_pings.
func TestN3_ClosesCountedByReason(t *testing.T) {
	f := startServer(t, false, func(o *Options) { o.FirstFrameTimeout = 200 * time.Millisecond })
	cc, hb := &counters.Channels, &counters.Heartbeat
	first, proto, pings, idle := cc.FirstFrameTimeouts.Load(), cc.ProtocolErrors.Load(), cc.TooManyPings.Load(), hb.IdleClosed.Load()

	for range 3 {
		expectClosed(t, rawConn(t, f)) // silent: the first-frame rule
	}
	if !waitFor(5*time.Second, func() bool { return cc.FirstFrameTimeouts.Load()-first == 3 }) {
		t.Fatalf("first-frame closes counted %d, want 3", cc.FirstFrameTimeouts.Load()-first)
	}

	for range 2 {
		c := rawConn(t, f)
		c.Write(make([]byte, 16)) // bad magic
		expectClosed(t, c)
	}
	if !waitFor(5*time.Second, func() bool { return cc.ProtocolErrors.Load()-proto == 2 }) {
		t.Fatalf("protocol-error closes counted %d, want 2", cc.ProtocolErrors.Load()-proto)
	}

	ch := f.dial(nil)
	var err error
	for range 3 * pingBurst {
		if err = ch.Ping(pingCtx(t)); err != nil {
			break
		}
	}
	if spi.StatusOf(err) != spi.StatusChannelInactive {
		t.Fatalf("ping flood: %v; want the guard to close the channel", err)
	}
	if !waitFor(5*time.Second, func() bool { return cc.TooManyPings.Load()-pings == 1 }) {
		t.Fatalf("too-many-pings closes counted %d, want 1", cc.TooManyPings.Load()-pings)
	}
	time.Sleep(300 * time.Millisecond) // a close counted twice would show by now
	if n := cc.ProtocolErrors.Load() - proto; n != 2 {
		t.Errorf("protocol-error closes %d after the ping flood, want still 2", n)
	}
	if n := cc.FirstFrameTimeouts.Load() - first; n != 3 {
		t.Errorf("first-frame closes %d, want still 3", n)
	}
	if n := hb.IdleClosed.Load() - idle; n != 0 {
		t.Errorf("heartbeat idle closes %d, want 0: none of these was a heartbeat's verdict", n)
	}
}

// tester18 N3: a provider that answered pings shows them in
// heartbeat.pings_received; heartbeat.pings_answered counts only the
// pings this process sent (a provider sends none), so it stays 0 there.
// The two are different directions, which the help texts now say.
func TestN3_PingsAProviderAnsweredAreReceived(t *testing.T) {
	f := startServer(t, false, nil)
	ch := f.dial(nil)
	hb := &counters.Heartbeat
	received, answered, sent := hb.PingsReceived.Load(), hb.PingsAnswered.Load(), hb.PingsSent.Load()
	for i := range 2 { // within the guard: the first, then one strike
		if err := ch.Ping(pingCtx(t)); err != nil {
			t.Fatalf("ping %d: %v", i+1, err)
		}
	}
	if n := hb.PingsReceived.Load() - received; n != 2 {
		t.Errorf("pings_received +%d, want +2: the provider answered both", n)
	}
	if a, s := hb.PingsAnswered.Load()-answered, hb.PingsSent.Load()-sent; a != 0 || s != 0 {
		t.Errorf("pings_answered +%d, pings_sent +%d: want 0, no heartbeat strategy of this process sent a ping", a, s)
	}
}

// tester18 (t17 #1 side note): a read cut short because this side's
// transport closed the connection after a failed write (a consumer that
// read nothing went away) is the peer's close, logged at Debug, never the
// WARN "protocol: truncated frame ... use of closed network connection";
// it is not counted as a protocol error. A frame the peer really cut
// short still is one.
func TestT18_ClosedUnderTheReadIsNotAProtocolError(t *testing.T) {
	f := startServer(t, false, nil)
	proto := counters.Channels.ProtocolErrors.Load()
	closedErr := &net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}
	for _, tc := range []struct {
		name   string
		err    error
		reason string
		broken bool // a write had failed
	}{
		{"use of closed network connection", fmt.Errorf("protocol: %w: body of 22 bytes: %w", protocol.ErrTruncated, closedErr), "closed by peer", false},
		{"after a failed write", fmt.Errorf("protocol: %w: body of 22 bytes: %w", protocol.ErrTruncated, errConnReset), "closed by peer", true},
		{"reset mid-frame", fmt.Errorf("protocol: %w: body of 22 bytes: %w", protocol.ErrTruncated, errConnReset), "read: ", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &levelSink{}
			ch := f.dial(func(o *Options) { o.Logger = slog.New(logs) })
			if err := ch.Ping(pingCtx(t)); err != nil {
				t.Fatal(err)
			}
			ch.writeBroken.Store(tc.broken)
			ch.readFailed(tc.err)
			if r := ch.Reason(); !strings.HasPrefix(r, tc.reason) || strings.Contains(r, "protocol") {
				t.Errorf("reason %q, want %q...", r, tc.reason)
			}
			if l := logs.find("channel closed"); !strings.HasPrefix(l, "DEBUG") && !strings.HasPrefix(l, "INFO") {
				t.Errorf("logged %q, want a DEBUG or INFO line", l)
			}
		})
	}
	if n := counters.Channels.ProtocolErrors.Load() - proto; n != 0 {
		t.Errorf("%d protocol errors counted, want 0", n)
	}
	// a write the peer reset, its reader stalled: Info, not Warn
	logs := &levelSink{}
	ch := f.dial(func(o *Options) { o.Logger = slog.New(logs) })
	ch.writeFailed(&net.OpError{Op: "write", Net: "tcp", Err: os.NewSyscallError("write", syscall.ECONNRESET)})
	<-ch.Done()
	if !waitFor(5*time.Second, func() bool { return logs.find("channel closed") != "" }) {
		t.Fatal("no channel closed line after a reset write")
	}
	if l := logs.find("channel closed"); !strings.HasPrefix(l, "INFO") || !strings.Contains(l, "reason=write: ") {
		t.Errorf("reset write logged %q, want INFO with reason write: ...", l)
	}

	ch = f.dial(nil)
	ch.readFailed(fmt.Errorf("protocol: %w: body of 22 bytes: %w", protocol.ErrTruncated, errUnexpectedEOF))
	if r := ch.Reason(); !strings.HasPrefix(r, "protocol: truncated") {
		t.Errorf("a frame the peer cut short: reason %q", r)
	}
	if n := counters.Channels.ProtocolErrors.Load() - proto; n != 1 {
		t.Errorf("%d protocol errors counted for a frame the peer cut short, want 1", n)
	}
}

var (
	errConnReset     = &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}
	errUnexpectedEOF = io.ErrUnexpectedEOF
)

// levelSink is a logSink whose records start with their level.
type levelSink struct{ logSink }

func (s *levelSink) Handle(ctx context.Context, r slog.Record) error {
	r.Message = r.Level.String() + " " + r.Message
	return s.logSink.Handle(ctx, r)
}
func (s *levelSink) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *levelSink) WithGroup(string) slog.Handler      { return s }
