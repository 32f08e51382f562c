package exchange

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// BenchmarkInvoke measures a 100-byte echo through the exchange over real
// loopback TCP at concurrency 1, 100 and 10,000 on one connection, next to a
// raw pipelined TCP echo with a coalescing writer (the practical limit,
// issue 3) measured in the same run: exchange-tcp (single-stream session,
// msgpack), exchange-smux (smux session, msgpack) and exchange-tcp-rawcodec
// (a reflection-free codec, to separate the exchange's cost from the
// codec's); the -direct variants run handlers on the reader (Options.Direct). Client and server share the process, so cpu-ns/op is the CPU
// of both ends per call. The ratio is exchange ns/op over raw-tcp ns/op at
// the same concurrency.
//
//	go test -run='^$' -bench='^BenchmarkInvoke$' -benchtime=2s -count=3 ./kernel/exchange
func BenchmarkInvoke(b *testing.B) {
	payload := bytes.Repeat([]byte{'p'}, 100)
	for _, conc := range []int{1, 100, 10_000} {
		b.Run(fmt.Sprintf("raw-tcp/c=%d", conc), func(b *testing.B) {
			srv := startRawEcho(b)
			cl := dialRawEcho(b, srv.addr())
			defer cl.close()
			frame := append(protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay, Length: 100}.Append(nil), payload...)
			runConcurrent(b, conc, func() error { return cl.call(frame) })
		})
		for _, tc := range []struct {
			name   string
			mux    bool
			codec  spi.Codec
			direct bool
		}{
			{"exchange-tcp", false, mpCodec{}, false},
			{"exchange-smux", true, mpCodec{}, false},
			{"exchange-tcp-rawcodec", false, rawCodec{}, false},
			{"exchange-tcp-direct", false, mpCodec{}, true},
			{"exchange-smux-direct", true, mpCodec{}, true},
		} {
			b.Run(fmt.Sprintf("%s/c=%d", tc.name, conc), func(b *testing.B) {
				f := startServer(b, tc.mux, func(o *Options) { o.Direct = tc.direct })
				ch := f.dial(nil)
				runConcurrent(b, conc, func() error {
					var reply []byte
					inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{payload}, Reply: &reply}
					res := ch.Invoke(context.Background(), tc.codec, inv, 5*time.Second)
					if res.Err == nil && len(reply) != 100 {
						return fmt.Errorf("reply %d bytes", len(reply))
					}
					return res.Err
				})
				st := ch.Stats()
				if st.Writes > 0 {
					b.ReportMetric(float64(st.FramesWritten)/float64(st.Writes), "frames/write")
				}
			})
		}
	}
}

// runConcurrent runs b.N calls of fn from conc goroutines and reports
// calls/s and the process CPU time (user + system, client and server
// together) per call, which shared machines disturb less than wall time.
func runConcurrent(b *testing.B, conc int, fn func() error) {
	b.ReportAllocs()
	cpu0 := cpuTime()
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if err := fn(); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime returns the process's user + system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rawEcho is the baseline server: it echoes every frame back with the
// response flags, from the reader goroutine, through a coalescing writer.
type rawEcho struct {
	l  net.Listener
	wg sync.WaitGroup
	mu sync.Mutex
	cs []net.Conn
}

func startRawEcho(b *testing.B) *rawEcho {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := &rawEcho{l: l}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.cs = append(s.cs, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() { defer s.wg.Done(); s.serve(c) }()
		}
	}()
	b.Cleanup(func() {
		l.Close()
		s.mu.Lock()
		for _, c := range s.cs {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *rawEcho) addr() string { return s.l.Addr().String() }

func (s *rawEcho) serve(c net.Conn) {
	w := newRawWriter(c)
	defer w.stop()
	br := bufio.NewReaderSize(c, 32<<10)
	var hb [protocol.HeaderLen]byte
	for {
		h, err := protocol.ReadHeader(br, &hb, 0)
		if err != nil {
			return
		}
		frame := make([]byte, protocol.HeaderLen+int(h.Length))
		if _, err := io.ReadFull(br, frame[protocol.HeaderLen:]); err != nil {
			return
		}
		protocol.Header{Status: spi.StatusOK, ID: h.ID, Length: h.Length}.Put(frame)
		w.enqueue(frame)
	}
}

// rawWriter is the baseline's coalescing writer: same idea as writer.
type rawWriter struct {
	mu     sync.Mutex
	buf    []byte
	signal chan struct{}
	done   chan struct{}
	wg     sync.WaitGroup
}

func newRawWriter(c io.Writer) *rawWriter {
	w := &rawWriter{signal: make(chan struct{}, 1), done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var spare []byte
		for {
			select {
			case <-w.signal:
			case <-w.done:
				return
			}
			runtime.Gosched()
			w.mu.Lock()
			out := w.buf
			w.buf = spare[:0]
			w.mu.Unlock()
			if len(out) > 0 {
				if _, err := c.Write(out); err != nil {
					return
				}
			}
			spare = out
		}
	}()
	return w
}

func (w *rawWriter) enqueue(f []byte) {
	w.mu.Lock()
	w.buf = append(w.buf, f...)
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

func (w *rawWriter) stop() { close(w.done); w.wg.Wait() }

// rawClient is the baseline client: pipelined frames with request ids.
type rawClient struct {
	c       net.Conn
	w       *rawWriter
	id      atomic.Uint64
	mu      sync.Mutex
	pending map[uint64]chan []byte
	wg      sync.WaitGroup
	chans   sync.Pool
}

func dialRawEcho(b *testing.B, addr string) *rawClient {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	cl := &rawClient{c: c, w: newRawWriter(c), pending: map[uint64]chan []byte{}}
	cl.chans.New = func() any { return make(chan []byte, 1) }
	cl.wg.Add(1)
	go func() {
		defer cl.wg.Done()
		br := bufio.NewReaderSize(c, 32<<10)
		var hb [protocol.HeaderLen]byte
		for {
			h, err := protocol.ReadHeader(br, &hb, 0)
			if err != nil {
				return
			}
			body := make([]byte, h.Length)
			if _, err := io.ReadFull(br, body); err != nil {
				return
			}
			cl.mu.Lock()
			done := cl.pending[h.ID]
			delete(cl.pending, h.ID)
			cl.mu.Unlock()
			done <- body
		}
	}()
	return cl
}

func (cl *rawClient) call(frame []byte) error {
	id := cl.id.Add(1)
	done := cl.chans.Get().(chan []byte)
	cl.mu.Lock()
	cl.pending[id] = done
	cl.mu.Unlock()
	var f [protocol.HeaderLen + 128]byte
	n := copy(f[:], frame)
	protocol.Header{Flags: frame[2], ID: id, Length: uint32(n - protocol.HeaderLen)}.Put(f[:])
	cl.w.enqueue(f[:n])
	body := <-done
	cl.chans.Put(done)
	if len(body) != n-protocol.HeaderLen {
		return fmt.Errorf("echo %d bytes", len(body))
	}
	return nil
}

func (cl *rawClient) close() {
	cl.w.stop()
	cl.c.Close()
	cl.wg.Wait()
}

// BenchmarkCodecPath is the encode/decode work of one call without any
// I/O: request encode, provider decode, response encode, consumer decode.
// It is the floor under BenchmarkInvoke's CPU per call.
func BenchmarkCodecPath(b *testing.B) {
	payload := bytes.Repeat([]byte{'p'}, 100)
	c := &Channel{}
	b.ReportAllocs()
	for b.Loop() {
		f := getFrame()
		inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{payload}}
		if err := encodeRequest(f, mpCodec{}, inv, time.Second); err != nil {
			b.Fatal(err)
		}
		p, args, err := protocol.ParseRequestPreamble(f.b[protocol.HeaderLen:])
		if err != nil || intern(p.Service) != inv.Service || intern(p.Method) != inv.Method || p.TimeoutMS != 1000 {
			b.Fatal(err, p)
		}
		var arg any
		dec := mpCodec{}.NewDecoder(bytes.NewReader(args))
		if err := dec.Decode(&arg); err != nil {
			b.Fatal(err)
		}
		spi.Release(dec)
		f.b = f.b[:protocol.HeaderLen]
		if _, err := encodeResponse(f, mpCodec{}, spi.Result{Value: arg}); err != nil {
			b.Fatal(err)
		}
		var reply []byte
		inv.Reply = &reply
		cl := &call{status: spi.StatusOK, codecID: 1, body: f.b[protocol.HeaderLen:]}
		if res := c.complete(cl, mpCodec{}, inv); res.Err != nil || len(reply) != 100 {
			b.Fatal(res.Err)
		}
		putFrame(f)
	}
}

// BenchmarkMixedLargeSmall measures small echo calls while another caller
// keeps 4 MiB responses in flight on the same connection, reporting the
// small calls' p50 and p99: on smux the large responses travel on streams of
// their own, on a single stream the small responses queue behind them.
//
//	go test -run='^$' -bench=BenchmarkMixedLargeSmall -benchtime=300x ./kernel/exchange
func BenchmarkMixedLargeSmall(b *testing.B) {
	for _, mux := range []bool{false, true} {
		name := map[bool]string{false: "single-stream", true: "smux"}[mux]
		b.Run(name, func(b *testing.B) {
			f := startServer(b, mux, nil)
			ch := f.dial(nil)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					var blob []byte
					inv := &spi.Invocation{Service: "demo.Echo", Method: "Payload", Args: []any{4 << 20}, Reply: &blob}
					ch.Invoke(context.Background(), mpCodec{}, inv, 10*time.Second)
				}
			}()
			time.Sleep(20 * time.Millisecond)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", i), 10*time.Second); res.Err != nil {
					b.Fatal(res.Err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			close(stop)
			wg.Wait()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
		})
	}
}
