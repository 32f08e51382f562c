package smux_test

import (
	"encoding/binary"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/spi"
)

// idleSessions is how many provider sessions one BenchmarkIdleSession
// iteration holds open at once (800 file descriptors with the consumers).
const idleSessions = 400

// BenchmarkIdleSession prices what an idle provider session of this
// transport holds, without the exchange on top: idleSessions consumers
// (raw TCP sockets speaking smux v2 by hand, so that the consumer side
// costs nothing here) each open a stream and exchange one 100-byte frame
// with the provider, then stay idle. Reported per session, after two GCs:
// goroutines, stack bytes, live heap bytes (heap-B/session, everything
// allocated, touched or not) and the process's RSS growth (rss-B/session,
// Linux only: what the pages actually touched cost). It is the transport's
// share of `airnode bench --idle` (bench/README.md); run it with
//
//	go test -run '^$' -bench IdleSession ./extensions/transport/smux
func BenchmarkIdleSession(b *testing.B) {
	tr, err := smux.Builder{}.Build(spi.MustParse("airnode://127.0.0.1:0/x"))
	if err != nil {
		b.Fatal(err)
	}
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	var goroutines, stack, heap, rss float64
	for range b.N {
		before := takeMem()
		consumers := make([]net.Conn, 0, idleSessions)
		sessions := make([]spi.Session, 0, idleSessions)
		for range idleSessions {
			c, p := idleExchange(b, l)
			consumers, sessions = append(consumers, c), append(sessions, p)
		}
		after := takeMem()
		goroutines += float64(after.goroutines - before.goroutines)
		stack += float64(after.stack) - float64(before.stack)
		heap += float64(after.heap) - float64(before.heap)
		rss += float64(after.rss) - float64(before.rss)
		for i := range sessions {
			_ = sessions[i].Close()
			_ = consumers[i].Close()
		}
	}
	n := float64(b.N * idleSessions)
	b.ReportMetric(goroutines/n, "goroutines/session")
	b.ReportMetric(stack/n, "stack-B/session")
	b.ReportMetric(heap/n, "heap-B/session")
	if rss != 0 {
		b.ReportMetric(rss/n, "rss-B/session")
	}
}

// idleExchange connects a raw consumer to l, opens stream 1 with a SYN and
// a 100-byte PSH frame, lets the provider session accept the stream, read
// the frame and echo it, and reads the echo back.
func idleExchange(b *testing.B, l spi.Listener) (net.Conn, spi.Session) {
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	p, err := l.Accept()
	if err != nil {
		b.Fatal(err)
	}
	const body = 100
	frames := make([]byte, 8+8+body)
	smuxHeader(frames, 0, 0)        // cmdSYN
	smuxHeader(frames[8:], 2, body) // cmdPSH
	if _, err := c.Write(frames); err != nil {
		b.Fatal(err)
	}
	st, err := p.Accept()
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, body)
	if _, err := io.ReadFull(st, buf); err != nil {
		b.Fatal(err)
	}
	if _, err := st.Write(buf); err != nil {
		b.Fatal(err)
	}
	if _, err := io.ReadFull(c, frames[8:]); err != nil { // the echoed PSH frame
		b.Fatal(err)
	}
	return c, p
}

// smuxHeader writes a smux v2 frame header for stream 1: version, command,
// length (little endian), stream id (little endian).
func smuxHeader(h []byte, cmd byte, length int) {
	h[0], h[1] = 2, cmd
	binary.LittleEndian.PutUint16(h[2:], uint16(length))
	binary.LittleEndian.PutUint32(h[4:], 1)
}

type memSnapshot struct {
	goroutines       int
	stack, heap, rss uint64 // bytes
}

func takeMem() memSnapshot {
	runtime.GC()
	runtime.GC() // the second frees what the first only swept
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSnapshot{runtime.NumGoroutine(), ms.StackInuse, ms.HeapAlloc, processRSS()}
}

// processRSS returns this process's resident set in bytes (VmRSS), or 0
// where /proc is missing.
func processRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kib << 10
		}
	}
	return 0
}
