package bench_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/airnode/airnode/bench"
)

// BenchmarkHandoffs prices the goroutine handoffs of airnode's exchange on
// the plain TCP echo: the same frames, no codec, one connection, with the
// exchange's structure added one piece at a time:
//
//	raw            flat-combining client writer, server answers inline (bench.EchoClient's design)
//	+cwriter       client frames go to a writer goroutine (poke, Gosched, Write), as exchange.writer
//	+swriter       the server's answers also go through a writer goroutine
//	+sworker       the server hands each request to a worker goroutine (exchange.dispatch)
//
//	go test -run '^$' -bench Handoffs -benchtime 100000x ./bench
//
// ns/op is wall time per call across all callers; cpu-ns/op is the
// process's CPU time per call (client and server together).
func BenchmarkHandoffs(b *testing.B) {
	variants := []struct {
		name                      string
		cwriter, swriter, sworker bool
	}{
		{"raw", false, false, false},
		{"+cwriter", true, false, false},
		{"+swriter", true, true, false},
		{"+sworker", true, true, true},
	}
	for _, c := range []int{1, 100} {
		for _, v := range variants {
			b.Run(fmt.Sprintf("c=%d/%s", c, v.name), func(b *testing.B) {
				srv := startHandoffServer(b, v.swriter, v.sworker)
				defer srv.close()
				cl := dialHandoffClient(b, srv.addr(), v.cwriter)
				defer cl.close()
				req := make([]byte, 100)
				r, err := bench.Run(context.Background(), bench.Config{Calls: int64(b.N), Concurrency: c, Warmup: -1},
					func(context.Context, int) error { return cl.call(req) })
				if err != nil || r.OK != int64(b.N) {
					b.Fatalf("%+v, %v", r, err)
				}
				b.ReportMetric(r.CPUUS*1e3, "cpu-ns/op")
				b.ReportMetric(r.P99US, "p99-µs")
			})
		}
	}
}

// goWriter is the exchange's writer design: callers append frames and poke
// one goroutine, which yields once and writes the whole batch.
type goWriter struct {
	mu     sync.Mutex
	buf    []byte
	signal chan struct{}
	done   chan struct{}
}

func newGoWriter(w io.Writer) *goWriter {
	gw := &goWriter{signal: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(gw.done)
		var spare []byte
		for range gw.signal {
			runtime.Gosched()
			gw.mu.Lock()
			out := gw.buf
			gw.buf = spare[:0]
			gw.mu.Unlock()
			if len(out) > 0 {
				if _, err := w.Write(out); err != nil {
					return
				}
			}
			spare = out
		}
	}()
	return gw
}

func (gw *goWriter) enqueue(frame []byte) {
	gw.mu.Lock()
	gw.buf = append(gw.buf, frame...)
	gw.mu.Unlock()
	select {
	case gw.signal <- struct{}{}:
	default:
	}
}

func (gw *goWriter) close() { close(gw.signal); <-gw.done }

type handoffServer struct {
	ln net.Listener
	wg sync.WaitGroup
	mu sync.Mutex
	cs []net.Conn
}

func startHandoffServer(b *testing.B, writerGoroutine, worker bool) *handoffServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := &handoffServer{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.cs = append(s.cs, c)
			s.mu.Unlock()
			s.wg.Go(func() { serveHandoff(c, writerGoroutine, worker) })
		}
	})
	return s
}

func (s *handoffServer) addr() string { return s.ln.Addr().String() }

func (s *handoffServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.cs {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func serveHandoff(c net.Conn, writerGoroutine, worker bool) {
	br := bufio.NewReaderSize(c, 64<<10)
	bw := bufio.NewWriterSize(c, 64<<10)
	var gw *goWriter
	if writerGoroutine {
		gw = newGoWriter(c)
		defer gw.close()
	}
	tasks := make(chan uint64)
	var workers sync.WaitGroup
	defer func() { close(tasks); workers.Wait() }()
	answer := func(id uint64) {
		var f [12 + 100]byte
		binary.BigEndian.PutUint32(f[:], 100)
		binary.BigEndian.PutUint64(f[4:], id)
		if gw != nil {
			gw.enqueue(f[:])
			return
		}
		_, _ = bw.Write(f[:])
	}
	var hdr [12]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return
		}
		if _, err := br.Discard(int(binary.BigEndian.Uint32(hdr[:]))); err != nil {
			return
		}
		id := binary.BigEndian.Uint64(hdr[4:])
		switch {
		case worker: // an idle worker takes it, else a new one (exchange.dispatch)
			select {
			case tasks <- id:
			default:
				workers.Go(func() {
					answer(id)
					for id := range tasks {
						answer(id)
					}
				})
			}
		default:
			answer(id)
			if gw == nil && br.Buffered() == 0 {
				if err := bw.Flush(); err != nil {
					return
				}
			}
		}
	}
}

// handoffClient is bench.EchoClient with an optional writer goroutine.
type handoffClient struct {
	conn    net.Conn
	gw      *goWriter
	flat    *bench.EchoClient
	nextID  atomic.Uint64
	mu      sync.Mutex
	pending map[uint64]chan struct{}
	done    chan struct{}
}

func dialHandoffClient(b *testing.B, addr string, writerGoroutine bool) *handoffClient {
	if !writerGoroutine {
		cl, err := bench.DialEcho(addr)
		if err != nil {
			b.Fatal(err)
		}
		return &handoffClient{flat: cl}
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	cl := &handoffClient{conn: c, gw: newGoWriter(c), pending: map[uint64]chan struct{}{}, done: make(chan struct{})}
	go func() {
		defer close(cl.done)
		br := bufio.NewReaderSize(c, 64<<10)
		var hdr [12]byte
		for {
			if _, err := io.ReadFull(br, hdr[:]); err != nil {
				return
			}
			if _, err := br.Discard(int(binary.BigEndian.Uint32(hdr[:]))); err != nil {
				return
			}
			id := binary.BigEndian.Uint64(hdr[4:])
			cl.mu.Lock()
			ch := cl.pending[id]
			delete(cl.pending, id)
			cl.mu.Unlock()
			ch <- struct{}{}
		}
	}()
	return cl
}

func (cl *handoffClient) call(req []byte) error {
	if cl.flat != nil {
		return cl.flat.Call(req)
	}
	id := cl.nextID.Add(1)
	ch := doneChans.Get().(chan struct{})
	cl.mu.Lock()
	cl.pending[id] = ch
	cl.mu.Unlock()
	var fb [12 + 256]byte
	var hdr [12]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(req)))
	binary.BigEndian.PutUint64(hdr[4:], id)
	cl.gw.enqueue(append(append(fb[:0], hdr[:]...), req...))
	select {
	case <-ch:
		doneChans.Put(ch)
		return nil
	case <-cl.done:
		return io.ErrUnexpectedEOF
	}
}

var doneChans = sync.Pool{New: func() any { return make(chan struct{}, 1) }}

func (cl *handoffClient) close() {
	if cl.flat != nil {
		cl.flat.Close()
		return
	}
	cl.conn.Close()
	<-cl.done
	cl.gw.close()
}
