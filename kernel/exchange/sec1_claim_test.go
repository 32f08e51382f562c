package exchange

import (
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
)

// heapAlloc returns the live heap after a collection.
func heapAlloc() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// tester49 finding 1: a 16-byte request header claiming a body of 8 MB
// (under the payload limit) and one byte of it made the provider allocate
// the whole claimed body: 100 tcp connections of 33 bytes each took
// 841 MB of heap, one smux connection with 200 such streams 1.68 GB. The
// reader now grows a large body as its bytes arrive (readBody), so each
// claim costs at most growFrom until more comes; the provider still serves
// a consumer, and a 6 MB request whose bytes do come still works.
func TestReadBody_ClaimedBodyNotReserved(t *testing.T) {
	const claim = 8388000
	const frames = 60
	for _, mux := range []bool{false, true} {
		name := "tcp"
		if mux {
			name = "smux"
		}
		t.Run(name, func(t *testing.T) {
			f := startServer(t, mux, nil)
			hdr := make([]byte, protocol.HeaderLen+1)
			before := heapAlloc()
			var sess *smuxSession
			if mux {
				conn, err := net.DialTimeout("tcp", f.addr(), 3*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				if sess, err = newSmuxSession(conn, false); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { sess.Close() })
			}
			for i := range frames {
				protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: uint64(i + 1), Length: claim}.Put(hdr)
				if mux {
					// one smux connection, a stream per claim
					st, err := sess.Open()
					if err != nil {
						t.Fatal(err)
					}
					if _, err := st.Write(hdr); err != nil {
						t.Fatal(err)
					}
					continue
				}
				c, err := net.DialTimeout("tcp", f.addr(), 3*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
				if _, err := c.Write(hdr); err != nil {
					t.Fatal(err)
				}
			}
			// the provider reads the headers and the byte within
			// milliseconds; then the claims are either reserved or not
			time.Sleep(time.Second)
			grew := heapAlloc() - before
			// per claim growFrom (64 KiB, the pooled first buffer) and the
			// goroutine and buffers of a connection or stream; reserved
			// claims were 60 x 8 MB = 503 MB (measured before the fix)
			bound := int64(frames * (growFrom + 64<<10))
			t.Logf("%d claims of %d bytes, %d bytes sent each: heap grew %.1f MiB (bound %.1f MiB)", frames, claim, len(hdr), float64(grew)/(1<<20), float64(bound)/(1<<20))
			if grew > bound {
				t.Errorf("heap grew %.1f MiB for %d claimed bodies of %d bytes of which 1 arrived; want at most %.1f MiB", float64(grew)/(1<<20), frames, claim, float64(bound)/(1<<20))
			}
			canary(t, f, 5)
			big := strings.Repeat("y", 6<<20)
			res := f.dial(nil).Invoke(t.Context(), mpCodec{}, echoInv("Echo", big), 20*time.Second)
			if res.Err != nil || res.Value != big {
				t.Fatalf("a 6 MiB request after the claims: err %v, value of %d bytes", res.Err, len(toString(res.Value)))
			}
		})
	}
}

// toString returns v if it is a string, else "".
func toString(v any) string {
	s, _ := v.(string)
	return s
}
