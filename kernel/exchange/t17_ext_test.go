package exchange_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/extensions/heartbeat/idle"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// sleeper serves Sleep(ms), honouring its context.
type sleeper struct{}

func (sleeper) Serve(ctx context.Context, req *exchange.Request) spi.Result {
	var ms int
	if err := req.Args.Decode(&ms); err != nil {
		return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "argument: %v", err)}
	}
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
		return spi.Result{Value: ms}
	case <-ctx.Done():
		return spi.Result{Err: ctx.Err()}
	}
}

// lines records log messages with their attributes.
type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) Enabled(context.Context, slog.Level) bool { return true }
func (l *lines) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.Key + "=" + a.Value.String()); return true })
	l.mu.Lock()
	l.all = append(l.all, b.String())
	l.mu.Unlock()
	return nil
}
func (l *lines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *lines) WithGroup(string) slog.Handler      { return l }

func (l *lines) find(s string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.all {
		if strings.Contains(r, s) {
			return r
		}
	}
	return ""
}

// Finding 2, the other side: the guard against ping floods during a call
// leaves a normal consumer alone — heartbeat=idle with
// heartbeat.interval=1s and heartbeat.ping.on.timeout (the default) while
// a long call runs and other calls keep timing out with nothing read, so
// that both the idle ping and the liveness ping after a silent timeout
// go out during calls. The connection is never closed.
func TestT17_2_NormalConsumerPingingDuringCallsIsNotClosed(t *testing.T) {
	for name, tr := range transports(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			u := spi.MustParse("airnode://127.0.0.1:1/demo.Echo?heartbeat.interval=1s")
			hb, err := idle.Builder{}.Build(u)
			if err != nil {
				t.Fatal(err)
			}
			l, err := tr.Listen("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			plog := &lines{}
			srv := exchange.NewServer(l, exchange.Options{Codec: codecByID, Handler: sleeper{}, Heartbeat: hb, Logger: slog.New(plog),
				Hello: exchange.HeartbeatHello(u)})
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve() }()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			sess, err := tr.Dial(ctx, srv.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			ch := exchange.NewChannel(sess, exchange.Options{Side: spi.Consumer, Codec: codecByID, Heartbeat: hb, Logger: quiet, Hello: exchange.HeartbeatHello(u)})
			t.Cleanup(func() {
				ch.Close("test done")
				ch.Wait()
				srv.Close()
				if err := <-errc; err != nil {
					t.Errorf("Serve: %v", err)
				}
			})
			pings := counters.Heartbeat.PingsReceived.Load() // process-wide: the other subtest's count too
			if err := ch.Ping(ctx); err != nil {             // the kernel's handshake ping
				t.Fatal(err)
			}
			sleep := func(ms int, timeout time.Duration) spi.Result {
				return ch.Invoke(context.Background(), msgpack.Codec{}, &spi.Invocation{Service: "demo.Echo", Method: "Sleep", Args: []any{ms}}, timeout)
			}
			var wg sync.WaitGroup
			long := make(chan spi.Result, 1)
			wg.Go(func() { long <- sleep(4000, 10*time.Second) })
			stop := time.Now().Add(4 * time.Second)
			for range 2 {
				wg.Go(func() {
					for time.Now().Before(stop) {
						if res := sleep(1500, 200*time.Millisecond); spi.StatusOf(res.Err) != spi.StatusServerTimeout {
							t.Errorf("a call to time out: %v", res.Err)
							return
						}
					}
				})
			}
			wg.Wait()
			if res := <-long; res.Err != nil {
				t.Fatalf("the long call: %v", res.Err)
			}
			if r := ch.Reason(); r != "" {
				t.Fatalf("the consumer's channel closed: %s", r)
			}
			if r := plog.find("too many pings"); r != "" {
				t.Fatal(r)
			}
			// the handshake's, then the idle heartbeat's and the liveness
			// checks' during the calls
			if n := counters.Heartbeat.PingsReceived.Load() - pings; n < 3 {
				t.Errorf("%d pings answered: the test did not ping during calls", n)
			} else {
				t.Logf("%d pings answered (both subtests), none refused", n)
			}
		})
	}
}

// Finding 1 on the path airnode serve runs: the bundled tcp transport
// (spi.TryWriter, so the reader never writes itself) and dispatcher
// adaptive. A raw socket that sends 32 KiB Echo requests and reads
// nothing makes the provider stop reading (the stall is logged) while a
// second consumer's calls succeed.
func TestT17_1_BundledTCPAdaptiveStalls(t *testing.T) {
	tr := transports(t)["tcp"]
	plog := &lines{}
	srv, ch := serveWith(t, tr, func(o *exchange.Options) { o.Logger, o.Adaptive = slog.New(plog), true })
	raw, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() }) // before the server closes (Cleanup runs last-in first-out)
	raw.(*net.TCPConn).SetReadBuffer(256 << 10)
	// one request frame, written by hand: Echo of a 32 KiB msgpack string
	body := protocol.AppendRequestPreamble(nil, "demo.Echo", "Echo", 0, nil, 1)
	body = append(body, 0xda, 0x80, 0x00) // msgpack str16, 32768 bytes
	body = append(body, bytes.Repeat([]byte{'x'}, 32768)...)
	frame := append(make([]byte, protocol.HeaderLen, protocol.HeaderLen+len(body)), body...)
	var sent int64
	stuck := false
	for id := uint64(1); sent < 200<<20 && !stuck; id++ {
		protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | msgpack.ID, ID: id, Length: uint32(len(body))}.Put(frame)
		for rest := frame; len(rest) > 0; {
			raw.SetWriteDeadline(time.Now().Add(time.Second))
			n, err := raw.Write(rest)
			rest, sent = rest[n:], sent+int64(n)
			if err != nil {
				if plog.find("of answers unread") != "" {
					stuck = true // the provider stopped reading; the partial frame is never finished
					break
				}
				if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
					t.Fatalf("write: %v", err)
				}
			}
		}
	}
	if !stuck {
		t.Fatalf("the provider read all %d MiB of requests and logged no stall", sent>>20)
	}
	for i := range 20 {
		if res := ch.Invoke(context.Background(), msgpack.Codec{}, &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{i}}, 5*time.Second); res.Err != nil {
			t.Fatalf("canary call %d: %v", i, res.Err)
		}
	}
	t.Logf("stopped after %d MiB: %s", sent>>20, plog.find("of answers unread"))
}
