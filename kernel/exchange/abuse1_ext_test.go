package exchange_test

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// garbageServer starts a Server on tr whose log (Debug and up) goes to
// the returned buffer.
func garbageServer(t *testing.T, tr spi.Transport) (addr string, log *logbuf.Buffer) {
	t.Helper()
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log = &logbuf.Buffer{}
	srv := exchange.NewServer(l, exchange.Options{Codec: codecByID, Handler: demo{},
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve() }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-errc; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv.Addr().String(), log
}

// sendGarbage connects to addr, writes b and waits (5 s at most) for the
// provider to close the connection.
func sendGarbage(t *testing.T, addr string, b []byte) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(b)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("%d bytes of garbage: the provider did not close the connection in 5 s", len(b))
			}
			return
		}
	}
}

// warnCloses returns the log's "channel closed" lines at WARN.
func warnCloses(log *logbuf.Buffer) []string {
	var out []string
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, `msg="channel closed"`) {
			out = append(out, l)
		}
	}
	return out
}

// tester34 F3: on the default smux transport, garbage (random bytes, an
// HTTP request, a frame header declaring a 4 GiB body) closed the
// connection with a Debug line ("accept stream: smux: accept stream:
// invalid protocol") and counted nothing, while tcp logged each at WARN
// and counted it in channels_closed{reason="protocol_error"}. Both
// transports now do the latter with the same garbage.
func TestAbuse1_GarbageWarnsAndCountsOnBothTransports(t *testing.T) {
	random := make([]byte, 4096)
	rand.Read(random)
	random[0] |= 0x80 // neither smux version (1, 2) nor airnode's magic (0xa1 0x7e)
	random[1] = 0
	// a request header claiming 4 GiB no longer closes at once: its body
	// is skipped as it comes (tester101), and one that never comes holds
	// the connection as a stalled body under the limit does, until the
	// heartbeat closes it; an event's header claiming it still closes
	huge := []byte{0xa1, 0x7e, 0xa1, 0, 0, 0, 0, 0, 0, 0, 0, 1}
	huge = binary.BigEndian.AppendUint32(huge, 1<<32-1)
	garbage := [][]byte{random, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), huge}
	for name, tr := range transports(t) {
		t.Run(name, func(t *testing.T) {
			addr, log := garbageServer(t, tr)
			before := counters.Channels.ProtocolErrors.Load()
			for _, g := range garbage {
				sendGarbage(t, addr, g)
			}
			if !waitUntil(3*time.Second, func() bool { return counters.Channels.ProtocolErrors.Load()-before >= uint64(len(garbage)) }) {
				t.Errorf("protocol errors counted: %d, want %d; log:\n%s", counters.Channels.ProtocolErrors.Load()-before, len(garbage), log.String())
			}
			// the reasons are of one class per kind: 1, 2 of a class are
			// logged (rate-bounded from then on). A close is counted and
			// its connection closed before its line is written: wait for
			// the lines too.
			waitUntil(3*time.Second, func() bool { return len(warnCloses(log)) >= 2 })
			lines := warnCloses(log)
			if len(lines) < 2 {
				t.Errorf("%d WARN channel-closed lines for %d garbage connections, want 2 or more; log:\n%s", len(lines), len(garbage), log.String())
			}
			want := "bad magic"
			if name == "smux" {
				want = "smux: invalid protocol"
			}
			if len(lines) > 0 && !strings.Contains(lines[0], want) {
				t.Errorf("first WARN line %q, want its reason to say %q", lines[0], want)
			}
			for _, l := range lines {
				t.Log(l)
			}
		})
	}
}

// tester34 F2: 500 connections each sending 64 random bytes made 83 WARN
// lines (a class per bad magic, its hex letters kept) against 9 for the
// same bytes repeated. Now they are as bounded as repeated bytes: the
// first, then one per doubling (1, 2, 4 ... 256): 9 lines, on either
// transport.
func TestAbuse1_RandomGarbageIsRateBounded(t *testing.T) {
	const conns = 500
	for name, tr := range transports(t) {
		t.Run(name, func(t *testing.T) {
			addr, log := garbageServer(t, tr)
			before := counters.Channels.ProtocolErrors.Load()
			b := make([]byte, 64)
			for range conns {
				rand.Read(b)
				if name == "smux" {
					b[0] |= 0x80 // not a smux version: smux would wait for the rest of a frame
				} else if b[0] == 0xa1 {
					b[0] = 0 // not airnode's magic
				}
				sendGarbage(t, addr, b)
			}
			waitUntil(3*time.Second, func() bool { return counters.Channels.ProtocolErrors.Load()-before >= conns })
			lines := warnCloses(log)
			t.Logf("%d connections of random bytes: %d WARN lines, %d protocol errors counted", conns, len(lines), counters.Channels.ProtocolErrors.Load()-before)
			if len(lines) > 10 {
				classes := map[string]bool{}
				for _, l := range lines {
					if i := strings.Index(l, "reason="); i >= 0 {
						classes[l[i:min(len(l), i+40)]] = true
					}
				}
				t.Errorf("%d WARN lines for %d connections of random bytes, want 9 (1, 2, 4 ... 256); %d distinct reasons, e.g. %v", len(lines), conns, len(classes), fmt.Sprint(lines[:3]))
			}
			if n := counters.Channels.ProtocolErrors.Load() - before; n < conns {
				t.Errorf("%d protocol errors counted, want %d", n, conns)
			}
		})
	}
}

// waitUntil polls cond every 5 ms until it holds or d passes.
func waitUntil(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
