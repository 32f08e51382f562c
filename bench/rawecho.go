package bench

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// frameHeader is the baseline's frame header: u32 payload length, u64 id.
const frameHeader = 12

// maxEchoFrame bounds a baseline frame's payload: 64 MiB.
const maxEchoFrame = 64 << 20

// ErrEchoClosed is returned by EchoClient.Call after Close or after the
// connection failed.
var ErrEchoClosed = errors.New("bench: echo connection closed")

// EchoServer answers every baseline frame with a frame of the same id and a
// fixed-size payload. Each connection has one goroutine that reads a frame,
// appends the answer to a buffered writer, and flushes when no further
// request is already buffered (many answers per write when callers are
// concurrent).
type EchoServer struct {
	ln       net.Listener
	respSize int

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// StartEchoServer listens on addr ("127.0.0.1:0" picks a port) and serves
// until Close. Every answer carries respSize bytes (0 to 64 MiB).
func StartEchoServer(addr string, respSize int) (*EchoServer, error) {
	if respSize < 0 || respSize > maxEchoFrame {
		return nil, fmt.Errorf("bench: echo response %d bytes: want 0 to %d", respSize, maxEchoFrame)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("bench: echo server: %w", err)
	}
	s := &EchoServer{ln: ln, respSize: respSize, conns: map[net.Conn]struct{}{}}
	s.wg.Go(s.accept)
	return s, nil
}

// Addr returns the listening address, host:port.
func (s *EchoServer) Addr() string { return s.ln.Addr().String() }

func (s *EchoServer) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Go(func() {
			s.serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			c.Close()
		})
		s.mu.Unlock()
	}
}

func (s *EchoServer) serve(c net.Conn) {
	br := bufio.NewReaderSize(c, 64<<10)
	bw := bufio.NewWriterSize(c, 64<<10)
	resp := make([]byte, frameHeader+s.respSize)
	binary.BigEndian.PutUint32(resp, uint32(s.respSize))
	var hdr [frameHeader]byte
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n > maxEchoFrame {
			return
		}
		if _, err := br.Discard(int(n)); err != nil {
			return
		}
		copy(resp[4:frameHeader], hdr[4:])
		if _, err := bw.Write(resp); err != nil {
			return
		}
		if br.Buffered() == 0 {
			if err := bw.Flush(); err != nil {
				return
			}
		}
	}
}

// Close stops accepting, closes every connection and waits for the
// server's goroutines. Idempotent.
func (s *EchoServer) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		s.ln.Close()
		for c := range s.conns {
			c.Close()
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// EchoClient is one baseline connection shared by concurrent callers:
// requests are pipelined with ids, written by flat combining (the caller
// that finds no write in progress writes every queued frame), and answers
// are routed to their callers by one reader goroutine.
type EchoClient struct {
	conn   net.Conn
	nextID atomic.Uint64

	wmu      sync.Mutex
	queued   []byte // frames waiting for the writer
	spare    []byte // the other buffer (double buffering)
	writing  bool   // a caller is writing
	writeErr error

	pmu     sync.Mutex
	pending map[uint64]chan error
	dead    error // set when the connection failed; fails new calls

	done chan struct{} // closed when the reader has exited
	once sync.Once
}

var replyChans = sync.Pool{New: func() any { return make(chan error, 1) }}

// DialEcho connects to an EchoServer at addr.
func DialEcho(addr string) (*EchoClient, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("bench: echo dial: %w", err)
	}
	cl := &EchoClient{conn: c, pending: map[uint64]chan error{}, done: make(chan struct{})}
	go cl.read()
	return cl, nil
}

// Call sends req and waits for its answer. It fails with ErrEchoClosed
// (wrapped) once the connection is gone.
func (c *EchoClient) Call(req []byte) error {
	id := c.nextID.Add(1)
	ch := replyChans.Get().(chan error)
	c.pmu.Lock()
	if c.dead != nil {
		c.pmu.Unlock()
		replyChans.Put(ch)
		return c.dead
	}
	c.pending[id] = ch
	c.pmu.Unlock()

	c.wmu.Lock()
	var hdr [frameHeader]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(req)))
	binary.BigEndian.PutUint64(hdr[4:], id)
	c.queued = append(append(c.queued, hdr[:]...), req...)
	if !c.writing {
		c.writing = true
		for len(c.queued) > 0 && c.writeErr == nil {
			out := c.queued
			c.queued = c.spare[:0]
			c.wmu.Unlock()
			_, err := c.conn.Write(out)
			c.wmu.Lock()
			c.spare = out[:0]
			if err != nil {
				c.writeErr = err
				c.conn.Close() // the reader fails every pending call
			}
		}
		c.queued = c.queued[:0]
		c.writing = false
	}
	c.wmu.Unlock()

	err := <-ch
	replyChans.Put(ch)
	return err
}

func (c *EchoClient) read() {
	defer close(c.done)
	br := bufio.NewReaderSize(c.conn, 64<<10)
	var hdr [frameHeader]byte
	var err error
	for {
		if _, err = io.ReadFull(br, hdr[:]); err != nil {
			break
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n > maxEchoFrame {
			err = fmt.Errorf("bench: echo answer of %d bytes", n)
			break
		}
		if _, err = br.Discard(int(n)); err != nil {
			break
		}
		id := binary.BigEndian.Uint64(hdr[4:])
		c.pmu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.pmu.Unlock()
		if ch != nil {
			ch <- nil
		}
	}
	c.conn.Close()
	c.pmu.Lock()
	c.dead = fmt.Errorf("%w: %v", ErrEchoClosed, err)
	for id, ch := range c.pending {
		delete(c.pending, id)
		ch <- c.dead
	}
	c.pmu.Unlock()
}

// Close closes the connection, fails calls in flight with ErrEchoClosed
// and waits for the reader. Idempotent.
func (c *EchoClient) Close() error {
	c.once.Do(func() { c.conn.Close() })
	<-c.done
	return nil
}
