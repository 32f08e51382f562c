package integration

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/heartbeat/dual"
	"github.com/airnode/airnode/extensions/heartbeat/idle"
	"github.com/airnode/airnode/extensions/heartbeat/none"
	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// quiet drops the exchange's "channel closed" logs.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// heartbeat builds the strategy a URL query selects ("heartbeat=dual&...").
func heartbeat(t testing.TB, query string) spi.Heartbeat {
	t.Helper()
	u := spi.MustParse("airnode://127.0.0.1:0/demo.Echo?" + query)
	var b spi.HeartbeatBuilder
	switch name := u.ParamOr("heartbeat", "idle"); name {
	case dual.Name:
		b = dual.Builder{}
	case none.Name:
		b = none.Builder{}
	default:
		b = idle.Builder{}
	}
	hb, err := b.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	return hb
}

// jsonCodec is a codec of the test's own (wire id 29), so these tests do
// not depend on the bundled codecs.
type jsonCodec struct{}

func (jsonCodec) Name() string                       { return "testjson" }
func (jsonCodec) ID() uint8                          { return 29 }
func (jsonCodec) NewEncoder(w io.Writer) spi.Encoder { return jsonEncoder{w, json.NewEncoder(w)} }
func (jsonCodec) NewDecoder(r io.Reader) spi.Decoder { return json.NewDecoder(r) }

// encodedJSON is an argument already encoded as one JSON value and its
// newline: jsonCodec writes it as is. A test whose timing must not hang on
// encoding megabytes (hundreds of ms under -race, seconds on a starved
// CPU) passes its large argument so.
type encodedJSON []byte

// jsonString returns s encoded as a JSON string, for an argument of
// plain ASCII letters (no escaping).
func jsonString(s string) encodedJSON { return encodedJSON("\"" + s + "\"\n") }

// jsonEncoder is jsonCodec's encoder.
type jsonEncoder struct {
	w io.Writer
	*json.Encoder
}

func (e jsonEncoder) Encode(v any) error {
	if b, ok := v.(encodedJSON); ok {
		_, err := e.w.Write(b)
		return err
	}
	return e.Encoder.Encode(v)
}

func codecByID(id uint8) (spi.Codec, error) {
	if id == 29 {
		return jsonCodec{}, nil
	}
	return nil, fmt.Errorf("unknown codec id %d", id)
}

// echo serves demo.Echo/Echo(string) string.
var echo = exchange.HandlerFunc(func(_ context.Context, req *exchange.Request) spi.Result {
	var s string
	if err := req.Args.Decode(&s); err != nil {
		return spi.Result{Err: err}
	}
	return spi.Result{Value: s}
})

func call(ch *exchange.Channel) error {
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"hi"}}
	return ch.Invoke(context.Background(), jsonCodec{}, inv, 500*time.Millisecond).Err
}

// counter counts the frames one side writes, by kind, from the bytes its
// streams write.
type counter struct {
	pings, answers, other atomic.Int64
	wire                  atomic.Pointer[wire] // optional: shared by both sides of a pair
	// beforeAnswer, when set, runs once before a heartbeat answer that
	// starts a Write is written (the Write waits for it).
	beforeAnswer atomic.Pointer[func()]
}

// wire records the longest silence between two frames in either direction.
type wire struct {
	mu      sync.Mutex
	last    time.Time
	longest time.Duration
}

func (w *wire) frame() {
	if w == nil {
		return
	}
	w.mu.Lock()
	now := time.Now()
	if !w.last.IsZero() && now.Sub(w.last) > w.longest {
		w.longest = now.Sub(w.last)
	}
	w.last = now
	w.mu.Unlock()
}

func (w *wire) Longest() time.Duration { w.mu.Lock(); defer w.mu.Unlock(); return w.longest }

func (c *counter) String() string {
	return fmt.Sprintf("pings %d, heartbeat answers %d, other frames %d", c.pings.Load(), c.answers.Load(), c.other.Load())
}

// countingSession wraps every stream of a session with a frame scanner.
type countingSession struct {
	spi.Session
	c *counter
}

func (s countingSession) Open() (io.ReadWriteCloser, error) {
	st, err := s.Session.Open()
	if err != nil {
		return nil, err
	}
	return &countingStream{ReadWriteCloser: st, c: s.c}, nil
}

func (s countingSession) Accept() (io.ReadWriteCloser, error) {
	st, err := s.Session.Accept()
	if err != nil {
		return nil, err
	}
	return &countingStream{ReadWriteCloser: st, c: s.c}, nil
}

type countingListener struct {
	spi.Listener
	c *counter
}

func (l countingListener) Accept() (spi.Session, error) {
	s, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingSession{Session: s, c: l.c}, nil
}

// countingStream parses the frames written to it: a 16-byte header, then
// Length body bytes (DESIGN §5).
type countingStream struct {
	io.ReadWriteCloser
	c *counter

	mu   sync.Mutex
	hdr  [protocol.HeaderLen]byte
	have int
	skip int64
}

func (s *countingStream) Write(b []byte) (int, error) {
	s.mu.Lock()
	if s.have == 0 && s.skip == 0 && len(b) > 2 && b[2]&protocol.FlagEvent != 0 && b[2]&protocol.FlagRequest == 0 {
		if f := s.c.beforeAnswer.Swap(nil); f != nil {
			(*f)()
		}
	}
	s.mu.Unlock()
	n, err := s.ReadWriteCloser.Write(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	for p := b[:n]; len(p) > 0; {
		if s.skip > 0 {
			k := min(int64(len(p)), s.skip)
			s.skip -= k
			p = p[k:]
			continue
		}
		k := copy(s.hdr[s.have:], p)
		s.have += k
		p = p[k:]
		if s.have < protocol.HeaderLen {
			break
		}
		s.have = 0
		s.c.wire.Load().frame()
		flags := s.hdr[2]
		switch {
		case flags&protocol.FlagEvent != 0 && flags&protocol.FlagRequest != 0:
			s.c.pings.Add(1)
		case flags&protocol.FlagEvent != 0:
			s.c.answers.Add(1)
		default:
			s.c.other.Add(1)
		}
		s.skip = int64(binary.BigEndian.Uint32(s.hdr[12:16]))
	}
	return n, err
}

// provider is an exchange server on smux with the echo handler.
type provider struct {
	srv    *exchange.Server
	addr   string
	wrote  *counter
	closed chan string // reasons of provider channels that died
}

func startProvider(t testing.TB, hb spi.Heartbeat, tweak ...func(*exchange.Options)) *provider {
	t.Helper()
	tr, err := smux.Builder{}.Build(spi.MustParse("airnode://127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &provider{addr: l.Addr().String(), wrote: &counter{}, closed: make(chan string, 16)}
	opts := exchange.Options{
		Codec: codecByID, Handler: echo, Heartbeat: hb, Logger: quiet,
		OnClose: func(_ *exchange.Channel, reason string) {
			select {
			case p.closed <- reason:
			default:
			}
		},
	}
	for _, f := range tweak {
		f(&opts)
	}
	p.srv = exchange.NewServer(countingListener{Listener: l, c: p.wrote}, opts)
	served := make(chan error, 1)
	go func() { served <- p.srv.Serve() }()
	t.Cleanup(func() {
		p.srv.Close()
		<-served
	})
	return p
}

// consumer is one consumer channel on smux.
type consumer struct {
	ch     *exchange.Channel
	wrote  *counter
	closed chan string
}

func dial(t testing.TB, addr string, hb spi.Heartbeat, tweak ...func(*exchange.Options)) *consumer {
	t.Helper()
	tr, err := smux.Builder{}.Build(spi.MustParse("airnode://127.0.0.1:0"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	sess, err := tr.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &consumer{wrote: &counter{}, closed: make(chan string, 1)}
	opts := exchange.Options{
		Side: spi.Consumer, Codec: codecByID, Heartbeat: hb, Logger: quiet,
		OnClose: func(_ *exchange.Channel, reason string) { c.closed <- reason },
	}
	for _, f := range tweak {
		f(&opts)
	}
	c.ch = exchange.NewChannel(countingSession{Session: sess, c: c.wrote}, opts)
	t.Cleanup(func() {
		c.ch.Close("test over")
		c.ch.Wait()
	})
	return c
}

// The child provider process: the test binary re-run with
// AIRNODE_HB_CHILD set to a heartbeat URL query. It prints "ADDR
// host:port" and serves until its stdin closes.
const childEnv = "AIRNODE_HB_CHILD"

func runChild(query string) {
	t := &childTB{}
	p := startProvider(t, heartbeat(t, query))
	fmt.Printf("ADDR %s\n", p.addr)
	_, _ = io.Copy(io.Discard, os.Stdin)
	t.cleanup()
}

// childTB is the sliver of testing.TB the harness uses, for the child.
type childTB struct {
	testing.TB
	cleanups []func()
}

func (c *childTB) Helper()                   {}
func (c *childTB) Fatal(args ...any)         { fmt.Fprintln(os.Stderr, args...); os.Exit(2) }
func (c *childTB) Cleanup(f func())          { c.cleanups = append(c.cleanups, f) }
func (c *childTB) Fatalf(f string, a ...any) { c.Fatal(fmt.Sprintf(f, a...)) }
func (c *childTB) cleanup() {
	for i := len(c.cleanups) - 1; i >= 0; i-- {
		c.cleanups[i]()
	}
}

// child is a provider process the test started.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string
}

func startChild(t testing.TB, query string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+query, testbin.NoExitSleep())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin}
	t.Cleanup(c.kill)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "ADDR ") {
		t.Fatalf("child provider: %q, %v", line, err)
	}
	c.addr = strings.TrimSpace(strings.TrimPrefix(line, "ADDR "))
	go io.Copy(io.Discard, out) //nolint:errcheck // drained until the child exits
	return c
}

// Stop and Cont send SIGSTOP and SIGCONT to the child (by PID).
func (c *child) Stop() error { return c.cmd.Process.Signal(syscall.SIGSTOP) }
func (c *child) Cont() error { return c.cmd.Process.Signal(syscall.SIGCONT) }

func (c *child) kill() {
	_ = c.Cont()
	_ = c.stdin.Close()
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// waitReason waits up to max for a reason on ch.
func waitReason(ch <-chan string, max time.Duration) (string, bool) {
	select {
	case r := <-ch:
		return r, true
	case <-time.After(max):
		return "", false
	}
}
