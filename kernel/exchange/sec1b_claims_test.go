package exchange

import (
	"net"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
)

// One smux connection may have thousands of streams open, each with a
// frame header claiming up to 64 KiB read in full at once (or a larger
// body's first growFrom): 16,384 streams each claiming 64 KiB and sending
// one byte reserved 1 GB of heap (airnode serve, one connection). A
// channel's streams of their own now reserve at most claimCap together
// (reserveClaim); beyond it a body grows from minPooledBody as its bytes
// arrive. The provider still serves a consumer, and a large request on a
// stream of its own still arrives whole.
func TestReadBody_StreamClaimsBoundedPerConnection(t *testing.T) {
	const streams = 4000
	for _, claim := range []uint32{growFrom, 8388000} {
		t.Run(protocol.FormatSize(int64(claim)), func(t *testing.T) {
			f := startServer(t, true, func(o *Options) { o.MaxConcurrent = 2 * streams })
			conn, err := net.DialTimeout("tcp", f.addr(), 3*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			sess, err := newSmuxSession(conn, false)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sess.Close() })
			if _, err := sess.Open(); err != nil { // the long-lived stream, idle
				t.Fatal(err)
			}
			before := heapAlloc()
			hdr := make([]byte, protocol.HeaderLen+1)
			for i := range streams {
				protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: uint64(i + 1), Length: claim}.Put(hdr)
				st, err := sess.Open()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := st.Write(hdr); err != nil {
					t.Fatal(err)
				}
			}
			// the provider reads every header and byte within a second or
			// so; sample the heap until the streams are all open
			var grew int64
			waitFor(10*time.Second, func() bool {
				grew = max(grew, heapAlloc()-before)
				return channelCount(f) == 1 && openStreams(f) >= streams
			})
			time.Sleep(200 * time.Millisecond)
			grew = max(grew, heapAlloc()-before)
			// claimCap, minPooledBody a stream beyond it, and a stream's
			// own costs (smux's stream, the reader's buffer: about 3 KiB
			// measured); reserved in full it was streams x growFrom
			// (250 MiB)
			bound := int64(claimCap + streams*(minPooledBody+8<<10))
			t.Logf("%d streams claiming %d bytes, 1 sent each: heap grew %.1f MiB (bound %.1f MiB; %d streams open)",
				streams, claim, float64(grew)/(1<<20), float64(bound)/(1<<20), openStreams(f))
			if n := openStreams(f); n < streams {
				t.Fatalf("%d streams open on the provider, want %d", n, streams)
			}
			if grew > bound {
				t.Errorf("heap grew %.1f MiB for %d streams each claiming a body of %d bytes of which 1 arrived; want at most %.1f MiB",
					float64(grew)/(1<<20), streams, claim, float64(bound)/(1<<20))
			}
			canary(t, f, 5)
			big := make([]byte, 3<<20) // a stream of its own on the fixture's consumer
			for i := range big {
				big[i] = byte('a' + i%26)
			}
			res := f.dial(nil).Invoke(t.Context(), mpCodec{}, echoInv("Echo", string(big)), 20*time.Second)
			if res.Err != nil || res.Value != string(big) {
				t.Fatalf("a 3 MiB request after the claims: err %v, value of %d bytes", res.Err, len(toString(res.Value)))
			}
		})
	}
}

// channelCount returns how many channels f's server has.
func channelCount(f *fixture) int {
	_, n := serverUnsent(f)
	return n
}

// openStreams returns the streams open on f's server's channels together.
func openStreams(f *fixture) int64 {
	f.srv.mu.Lock()
	defer f.srv.mu.Unlock()
	var n int64
	for c := range f.srv.chans {
		n += c.openStreams.Load()
	}
	return n
}
