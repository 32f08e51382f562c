package kernel

import (
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// exportLogged exports demo.Echo on transport tr at a free loopback port
// with the node's log, at Info, in the returned buffer.
func exportLogged(t *testing.T, tr string) (*Exporter, *syncBuffer) {
	t.Helper()
	var log syncBuffer
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&log, nil))), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?transport="+tr))
	if err != nil {
		t.Fatal(err)
	}
	return e, &log
}

// channelCloses returns the provider's "channel closed" lines of log.
func channelCloses(log *syncBuffer) []string {
	var out []string
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, `msg="channel closed"`) {
			out = append(out, l)
		}
	}
	return out
}

// fix-bt #1: a consumer whose URL key transport differs from its
// provider's, in both directions. fix-bk made a tcp provider close a smux
// consumer's connection at Info as a transport mismatch; a smux provider
// still logged a tcp consumer's at WARN ("smux: invalid protocol"), since
// smux never showed the bytes it failed on. It now keeps a provider
// connection's first bytes (ProtocolError.FirstBytes) and the tcp
// transport recognizes its consumers' opening (an airnode request
// header): the same Info record, naming transport=tcp. The consumer's
// call fails CHANNEL_INACTIVE naming a transport mismatch and its own
// transport first, in either direction.
func TestBT_TransportMismatchIsInfoOnBothListeners(t *testing.T) {
	for _, tc := range []struct{ provider, consumer string }{{"smux", "tcp"}, {"tcp", "smux"}} {
		t.Run("provider="+tc.provider, func(t *testing.T) {
			e, log := exportLogged(t, tc.provider)
			r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo?transport="+tc.consumer+"&connect.timeout=5s")
			_, err := r.Invoke(ctxT(t), "Echo", 1)
			if spi.StatusOf(err) != spi.StatusChannelInactive ||
				!strings.Contains(err.Error(), "closed the connection during the first ping") ||
				!strings.Contains(err.Error(), "likely a transport mismatch (this consumer's transport="+tc.consumer+": set the provider's, airnode call, bench, health: -p transport=NAME") {
				t.Errorf("Echo = %v; want CHANNEL_INACTIVE naming a transport mismatch and transport=%s first", err, tc.consumer)
			}
			want := `reason="transport mismatch: the consumer speaks transport=` + tc.consumer + `, this listener transport=` + tc.provider +
				`: the consumer's URL key transport must be ` + tc.provider + ` (airnode call, bench, health: -p transport=` + tc.provider + `)`
			eventually(t, "the provider's channel-closed line", func() bool { return len(channelCloses(log)) > 0 })
			for _, l := range channelCloses(log) {
				if !strings.Contains(l, "level=INFO") || !strings.Contains(l, want) {
					t.Errorf("provider logged %s\nwant an INFO line with %s", l, want)
				}
			}
			if strings.Contains(log.String(), "level=WARN") {
				t.Errorf("provider log has WARN lines for a consumer of another transport:\n%s", log)
			}
		})
	}
}

// fix-bt #1: on a smux listener, tcp consumers connecting again and again
// are rate-bounded as fix-bk's are (the first, then one per doubling),
// and bytes that are neither smux's nor a tcp consumer's stay a protocol
// error at WARN, their first bytes named.
func TestBT_SmuxListenerMismatchIsRateBoundedGarbageStaysWarn(t *testing.T) {
	e, log := exportLogged(t, "smux")
	ping := protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: 1}.Append(nil)
	const conns = 20
	for i := 0; i < conns; i++ {
		sendAndWaitClose(t, e.URL().Address(), ping)
	}
	eventually(t, "the mismatch lines", func() bool { return len(channelCloses(log)) > 0 })
	time.Sleep(200 * time.Millisecond) // the last lines of the burst, if any
	lines := channelCloses(log)
	if len(lines) > 6 { // 1, 2, 4, 8, 16
		t.Errorf("%d channel-closed lines for %d tcp consumers; want at most 6 (rate-bounded):\n%s", len(lines), conns, strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if !strings.Contains(l, "level=INFO") || !strings.Contains(l, "transport mismatch: the consumer speaks transport=tcp, this listener transport=smux") ||
			!strings.Contains(l, "first bytes 0xa17ee00000000000") {
			t.Errorf("provider logged %s\nwant INFO transport mismatch naming the first bytes", l)
		}
	}
	before := len(lines)
	sendAndWaitClose(t, e.URL().Address(), []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	eventually(t, "the garbage's line", func() bool { return len(channelCloses(log)) > before })
	l := channelCloses(log)[before]
	if !strings.Contains(l, "level=WARN") || !strings.Contains(l, "smux: invalid protocol") || !strings.Contains(l, "first bytes 0x474554202f204854") ||
		strings.Contains(l, "transport mismatch") {
		t.Errorf("provider logged for an HTTP request %s\nwant WARN smux: invalid protocol naming its first bytes", l)
	}
}

// sendAndWaitClose connects to addr, writes b and waits until the
// provider closes the connection (5 s at most).
func sendAndWaitClose(t *testing.T, addr string, b []byte) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var buf [64]byte
	for {
		if _, err := c.Read(buf[:]); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("%s did not close a connection that sent % x", addr, b[:8])
			}
			return
		}
	}
}
