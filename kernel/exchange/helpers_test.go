package exchange

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/xtaci/smux"

	"github.com/airnode/airnode/internal/smuxread"
	"github.com/airnode/airnode/spi"
)

// Test-only codecs and transports: kernel must not import extensions, so
// these stand in for extensions/codec and extensions/transport.

// mpCodec is a msgpack codec with wire id 1.
type mpCodec struct{}

func (mpCodec) Name() string                       { return "msgpack" }
func (mpCodec) ID() uint8                          { return 1 }
func (mpCodec) NewEncoder(w io.Writer) spi.Encoder { return msgpack.NewEncoder(w) }
func (mpCodec) NewDecoder(r io.Reader) spi.Decoder { return msgpack.NewDecoder(r) }

// jsonCodec is an encoding/json codec with wire id 2.
type jsonCodec struct{}

func (jsonCodec) Name() string                       { return "json" }
func (jsonCodec) ID() uint8                          { return 2 }
func (jsonCodec) NewEncoder(w io.Writer) spi.Encoder { return json.NewEncoder(w) }
func (jsonCodec) NewDecoder(r io.Reader) spi.Decoder { return json.NewDecoder(r) }

func codecByID(id uint8) (spi.Codec, error) {
	switch id {
	case 1:
		return mpCodec{}, nil
	case 2:
		return jsonCodec{}, nil
	case 3:
		return rawCodec{}, nil
	}
	return nil, fmt.Errorf("unknown codec id %d", id)
}

// connSession is a single-stream session over one net.Conn (like the tcp
// transport): the dialer's Open and the acceptor's Accept return the conn
// once.
type connSession struct {
	conn     net.Conn
	provider bool
	mu       sync.Mutex
	taken    bool
	done     chan struct{}
	once     sync.Once
}

func newConnSession(conn net.Conn, provider bool) *connSession {
	return &connSession{conn: conn, provider: provider, done: make(chan struct{})}
}

func (s *connSession) take() (io.ReadWriteCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.taken {
		return nil, spi.ErrNotMultiplexed
	}
	s.taken = true
	return s.conn, nil
}

func (s *connSession) Open() (io.ReadWriteCloser, error) { return s.take() }

func (s *connSession) Accept() (io.ReadWriteCloser, error) {
	if s.provider {
		if st, err := s.take(); err == nil {
			return st, nil
		}
	}
	<-s.done
	return nil, net.ErrClosed
}

func (s *connSession) Multiplexed() bool    { return false }
func (s *connSession) LocalAddr() net.Addr  { return s.conn.LocalAddr() }
func (s *connSession) RemoteAddr() net.Addr { return s.conn.RemoteAddr() }
func (s *connSession) Done() <-chan struct{} {
	return s.done
}
func (s *connSession) Close() error {
	s.once.Do(func() { close(s.done); s.conn.Close() })
	return nil
}

// smuxSession is a multiplexed session over smux v2, keepalive off. Like
// the bundled smux transport, its Done closes when the connection fails
// (smux itself leaves the session open then) or the session is closed.
type smuxSession struct {
	s    *smux.Session
	done chan struct{}
	once sync.Once
}

// doneConn closes done, through once, when a read fails.
type doneConn struct {
	net.Conn
	s *smuxSession
}

func (c doneConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		c.s.once.Do(func() { close(c.s.done) })
	}
	return n, err
}

func smuxConfig() *smux.Config {
	c := smux.DefaultConfig()
	c.Version = 2
	c.KeepAliveDisabled = true
	return c
}

func newSmuxSession(conn net.Conn, provider bool) (*smuxSession, error) {
	ss := &smuxSession{done: make(chan struct{})}
	wc := doneConn{Conn: conn, s: ss}
	var err error
	if provider {
		ss.s, err = smux.Server(wc, smuxConfig())
	} else {
		ss.s, err = smux.Client(wc, smuxConfig())
	}
	if err != nil {
		return nil, err
	}
	return ss, nil
}

func (s *smuxSession) Open() (io.ReadWriteCloser, error) {
	st, err := s.s.OpenStream()
	if err != nil {
		return nil, err
	}
	return smuxStream{st}, nil
}

func (s *smuxSession) Accept() (io.ReadWriteCloser, error) {
	st, err := s.s.AcceptStream()
	if err != nil {
		return nil, err
	}
	return smuxStream{st}, nil
}

// smuxStream reads as the smux transport's streams do (smuxread.Read).
type smuxStream struct{ *smux.Stream }

func (s smuxStream) Read(b []byte) (int, error) { return smuxread.Read(s.Stream, b) }

func (s *smuxSession) Multiplexed() bool     { return true }
func (s *smuxSession) LocalAddr() net.Addr   { return s.s.LocalAddr() }
func (s *smuxSession) RemoteAddr() net.Addr  { return s.s.RemoteAddr() }
func (s *smuxSession) Done() <-chan struct{} { return s.done }
func (s *smuxSession) Close() error {
	s.once.Do(func() { close(s.done) })
	return s.s.Close()
}

// testListener turns accepted TCP connections into sessions.
type testListener struct {
	l   net.Listener
	mux bool
}

func (l *testListener) Accept() (spi.Session, error) {
	conn, err := l.l.Accept()
	if err != nil {
		return nil, err
	}
	if l.mux {
		return newSmuxSession(conn, true)
	}
	return newConnSession(conn, true), nil
}
func (l *testListener) Addr() net.Addr { return l.l.Addr() }
func (l *testListener) Close() error   { return l.l.Close() }

func dialSession(t testing.TB, addr string, mux bool) spi.Session {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	if mux {
		s, err := newSmuxSession(conn, false)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return newConnSession(conn, false)
}

// logSink captures log records for assertions.
type logSink struct {
	mu   sync.Mutex
	recs []string
}

func (s *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (s *logSink) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s=%v", a.Key, a.Value); return true })
	s.mu.Lock()
	s.recs = append(s.recs, b.String())
	s.mu.Unlock()
	return nil
}
func (s *logSink) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *logSink) WithGroup(string) slog.Handler      { return s }

// waitFor polls cond until it is true or d passes; it returns cond's last answer.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(2 * time.Millisecond)
	}
	return cond()
}

// lines returns a copy of the records so far, for a failure message
// (the provider's goroutines may still be logging).
func (s *logSink) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.recs...)
}

func (s *logSink) find(substr string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.recs {
		if strings.Contains(r, substr) {
			return r
		}
	}
	return ""
}

// echoService is the provider used by the tests; its methods mirror demo.Echo.
type echoService struct {
	mu       sync.Mutex
	lastAtt  map[string]string
	lastApp  string // Request.Application
	lastTO   time.Duration
	lastDL   time.Time
	hasDL    bool
	canceled chan time.Time // Block reports when its ctx ended
}

// lastApplication returns the Request.Application of the last request.
func (e *echoService) lastApplication() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lastApp
}

func (e *echoService) Serve(ctx context.Context, req *Request) spi.Result {
	args := make([]any, req.NumArgs)
	for i := range args {
		if err := req.Args.Decode(&args[i]); err != nil {
			return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "argument %d: %v", i, err)}
		}
	}
	e.mu.Lock()
	e.lastAtt = req.Attachments
	e.lastApp = req.Application
	e.lastTO = req.Timeout
	e.lastDL, e.hasDL = ctx.Deadline()
	e.mu.Unlock()
	if req.Service != "demo.Echo" {
		return spi.Result{Err: spi.Errorf(spi.StatusServiceNotFound, "no service %q", req.Service)}
	}
	switch req.Method {
	case "Echo":
		return spi.Result{Value: args[0]}
	case "EchoAtt":
		return spi.Result{Value: args[0], Attachments: map[string]string{"echoed": "yes"}}
	case "ManyAtt": // args[0] attachments in the answer
		return spi.Result{Value: args[0], Attachments: manyAttachments(toInt(args[0]))}
	case "Sleep":
		ms := toInt(args[0])
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return spi.Result{Value: ms}
		case <-ctx.Done():
			return spi.Result{Err: ctx.Err()}
		}
	case "Block":
		<-ctx.Done()
		if e.canceled != nil {
			e.canceled <- time.Now()
		}
		return spi.Result{Err: ctx.Err()}
	case "Payload":
		return spi.Result{Value: bytes.Repeat([]byte{'x'}, toInt(args[0]))}
	case "Fail":
		return spi.Result{Err: errors.New(args[0].(string))}
	case "Status":
		return spi.Result{Err: spi.Errorf(spi.StatusServerThreadpoolExhausted, "busy")}
	case "Inactive":
		return spi.Result{Err: spi.Errorf(spi.StatusChannelInactive, "the plugin process died during the call (it may have run)")}
	case "Panic":
		panic("boom")
	}
	return spi.Result{Err: spi.Errorf(spi.StatusServiceNotFound, "no method %q", req.Method)}
}

func toInt(v any) int {
	switch n := v.(type) {
	case int8:
		return int(n)
	case int16:
		return int(n)
	case int32:
		return int(n)
	case int64:
		return int(n)
	case uint8:
		return int(n)
	case uint16:
		return int(n)
	case uint32:
		return int(n)
	case uint64:
		return int(n)
	case float64:
		return int(n)
	case int:
		return n
	}
	return -1
}

// fixture is a running Server on loopback.
type fixture struct {
	t    testing.TB
	srv  *Server
	svc  *echoService
	logs *logSink
	mux  bool
	errc chan error
}

func startServer(t testing.TB, mux bool, tweak func(*Options)) *fixture {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startServerOn(t, l, mux, tweak)
}

// startServerUnix is startServer on a Unix socket: a stream whose writer
// simply waits while its reader reads nothing. Over loopback TCP a peer
// that reads nothing while many small answers arrive overruns its receive
// memory and drops them; the window updates that follow are then out of
// its window and ignored, so its own writes wait for the sender's
// retransmission timer (seconds, doubling): a test of what the provider
// does about such a peer measures the kernel instead.
func startServerUnix(t testing.TB, tweak func(*Options)) *fixture {
	t.Helper()
	dir, err := os.MkdirTemp("", "exch") // short: socket paths are limited to ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	return startServerOn(t, l, false, tweak)
}

// startServerOn serves the echo service on l until cleanup.
func startServerOn(t testing.TB, l net.Listener, mux bool, tweak func(*Options)) *fixture {
	t.Helper()
	f := &fixture{t: t, svc: &echoService{}, logs: &logSink{}, mux: mux, errc: make(chan error, 1)}
	opts := Options{Codec: codecByID, Handler: f.svc, Logger: slog.New(f.logs)}
	if tweak != nil {
		tweak(&opts)
	}
	f.srv = NewServer(&testListener{l: l, mux: mux}, opts)
	go func() { f.errc <- f.srv.Serve() }()
	t.Cleanup(func() {
		f.srv.Close()
		if err := <-f.errc; err != nil {
			t.Errorf("Serve returned %v", err)
		}
	})
	return f
}

func (f *fixture) addr() string { return f.srv.Addr().String() }

// dial opens a consumer channel to the fixture, closed at cleanup.
func (f *fixture) dial(tweak func(*Options)) *Channel {
	f.t.Helper()
	opts := Options{Side: spi.Consumer, Codec: codecByID, Logger: slog.New(&logSink{})}
	if tweak != nil {
		tweak(&opts)
	}
	ch := NewChannel(dialSession(f.t, f.addr(), f.mux), opts)
	f.t.Cleanup(func() { ch.Close("test done"); ch.Wait() })
	return ch
}

func echoInv(method string, args ...any) *spi.Invocation {
	return &spi.Invocation{Service: "demo.Echo", Method: method, Args: args}
}

func wantStatus(t testing.TB, err error, st spi.Status) *spi.Error {
	t.Helper()
	var e *spi.Error
	if !errors.As(err, &e) || e.Status != st {
		t.Fatalf("err = %v, want status %s", err, st)
	}
	return e
}

// concurrentEchoes makes n Echo calls on ch at once and reports every one
// that fails or answers another value.
func concurrentEchoes(t *testing.T, ch *Channel, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", fmt.Sprint(i)), 10*time.Second)
			if res.Err != nil || res.Value != fmt.Sprint(i) {
				errs <- fmt.Errorf("call %d: %v %v", i, res.Value, res.Err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// slowPeer returns a consumer channel to a raw peer that reads nothing
// until release is called, then reads frames and sends their request ids
// on seen. The consumer's socket buffers are small, so a 7 MiB request
// cannot fit in them: the writer blocks inside its write. The channel is
// closed and waited for at the end of the test; release is idempotent.
func slowPeer(t *testing.T) (ch *Channel, release func(), seen <-chan uint64) {
	t.Helper()
	rel := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(rel) }) }
	ids := make(chan uint64, 64)
	raw := newRawPeer(t, func(c net.Conn) {
		// small enough that 7 MiB cannot fit in the socket buffers,
		// large enough (over loopback's MSS) that the window reopens
		// promptly once the peer reads
		c.(*net.TCPConn).SetReadBuffer(256 << 10)
		<-rel
		br := bufio.NewReader(c)
		for {
			h, _, err := readFrame(br)
			if err != nil {
				return
			}
			ids <- h.ID
		}
	})
	t.Cleanup(release) // after the peer's: runs before it, so the peer can end
	conn, err := net.Dial("tcp", raw.addr())
	if err != nil {
		t.Fatal(err)
	}
	conn.(*net.TCPConn).SetWriteBuffer(4096)
	ch = NewChannel(newConnSession(conn, false), Options{Side: spi.Consumer, Codec: codecByID})
	t.Cleanup(func() { ch.Close("done"); ch.Wait() })
	return ch, release, ids
}

// waitWriterStuck waits until ch's writer is inside the write of a batch
// it cannot finish (slowPeer).
func waitWriterStuck(t *testing.T, ch *Channel) {
	t.Helper()
	if !waitFor(5*time.Second, func() bool {
		ch.w.mu.Lock()
		defer ch.w.mu.Unlock()
		return ch.w.gen >= 2 && ch.w.flushed.Load() < ch.w.gen-1
	}) {
		t.Fatal("no request occupied the writer")
	}
}
