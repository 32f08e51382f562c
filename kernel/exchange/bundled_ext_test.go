package exchange_test

// Black-box tests and benchmarks with the bundled smux and tcp transports and
// the msgpack codec (imported by tests only: kernel code never imports
// extensions).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// demo serves Echo(any) and Payload(n).
type demo struct{}

func (demo) Serve(ctx context.Context, req *exchange.Request) spi.Result {
	switch req.Method {
	case "Echo":
		var v any
		if err := req.Args.Decode(&v); err != nil {
			return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "argument: %v", err)}
		}
		return spi.Result{Value: v}
	case "Payload":
		var n int
		if err := req.Args.Decode(&n); err != nil {
			return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "argument: %v", err)}
		}
		return spi.Result{Value: bytes.Repeat([]byte{'x'}, n)}
	}
	return spi.Result{Err: spi.Errorf(spi.StatusServiceNotFound, "no method %q", req.Method)}
}

func codecByID(id uint8) (spi.Codec, error) {
	if id == msgpack.ID {
		return msgpack.Codec{}, nil
	}
	return nil, fmt.Errorf("unknown codec id %d", id)
}

func transports(t testing.TB) map[string]spi.Transport {
	out := map[string]spi.Transport{}
	for _, b := range []spi.TransportBuilder{smux.Builder{}, tcp.Builder{}} {
		tr, err := b.Build(spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		out[b.Name()] = tr
	}
	return out
}

// serve starts a Server on tr and returns a consumer channel to it.
func serve(t testing.TB, tr spi.Transport) (*exchange.Server, *exchange.Channel) {
	t.Helper()
	return serveWith(t, tr, nil)
}

// serveWith is serve with the server's Options changed by opts (nil: none).
func serveWith(t testing.TB, tr spi.Transport, opts func(*exchange.Options)) (*exchange.Server, *exchange.Channel) {
	t.Helper()
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := exchange.Options{Codec: codecByID, Handler: demo{}, Logger: quiet}
	if opts != nil {
		opts(&o)
	}
	srv := exchange.NewServer(l, o)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve() }()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	sess, err := tr.Dial(ctx, srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ch := exchange.NewChannel(sess, exchange.Options{Side: spi.Consumer, Codec: codecByID, Logger: quiet})
	t.Cleanup(func() {
		ch.Close("test done")
		ch.Wait()
		srv.Close()
		if err := <-errc; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv, ch
}

func TestBundledTransports(t *testing.T) {
	for name, tr := range transports(t) {
		t.Run(name, func(t *testing.T) {
			srv, ch := serve(t, tr)
			ctx := context.Background()
			inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"hello"}}
			if res := ch.Invoke(ctx, msgpack.Codec{}, inv, time.Second); res.Err != nil || res.Value != "hello" {
				t.Fatalf("Echo: %+v", res)
			}
			// Payload 10000000: a clear error naming 8 MiB, then the next call works
			res := ch.Invoke(ctx, msgpack.Codec{}, &spi.Invocation{Service: "demo.Echo", Method: "Payload", Args: []any{10_000_000}}, 5*time.Second)
			var e *spi.Error
			if !errors.As(res.Err, &e) || e.Status != spi.StatusBadResponse || !strings.Contains(e.Message, "8 MiB") {
				t.Fatalf("Payload 10000000: %v", res.Err)
			}
			var b []byte
			if res := ch.Invoke(ctx, msgpack.Codec{}, &spi.Invocation{Service: "demo.Echo", Method: "Payload", Args: []any{4 << 20}, Reply: &b}, 5*time.Second); res.Err != nil || len(b) != 4<<20 {
				t.Fatalf("Payload 4 MiB: %v, %d bytes", res.Err, len(b))
			}
			// random bytes on a raw socket do not disturb this consumer
			raw, err := net.Dial("tcp", srv.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			raw.Write([]byte("\x00\x01\x02 random garbage that is not a frame \xff\xfe"))
			defer raw.Close()
			// 1,000 concurrent calls on one channel all succeed
			var wg sync.WaitGroup
			var failed atomic.Int64
			for i := range 1000 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res := ch.Invoke(ctx, msgpack.Codec{}, &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{i}}, 10*time.Second)
					if res.Err != nil {
						failed.Add(1)
					}
				}()
			}
			wg.Wait()
			if failed.Load() != 0 {
				t.Fatalf("%d of 1000 concurrent calls failed", failed.Load())
			}
		})
	}
}

// BenchmarkInvokeBundled is BenchmarkInvoke's exchange case with the bundled
// transports and msgpack codec (a 100-byte echo):
//
//	go test -run='^$' -bench=BenchmarkInvokeBundled -benchtime=2s ./kernel/exchange
func BenchmarkInvokeBundled(b *testing.B) {
	payload := bytes.Repeat([]byte{'p'}, 100)
	for _, conc := range []int{1, 100} {
		for _, name := range []string{"tcp", "smux"} {
			b.Run(fmt.Sprintf("%s/c=%d", name, conc), func(b *testing.B) {
				_, ch := serve(b, transports(b)[name])
				b.ReportAllocs()
				var next atomic.Int64
				var wg sync.WaitGroup
				var failed atomic.Value
				cpu0 := cpuTime()
				b.ResetTimer()
				start := time.Now()
				for range conc {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for next.Add(1) <= int64(b.N) {
							var reply []byte
							inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{payload}, Reply: &reply}
							if res := ch.Invoke(context.Background(), msgpack.Codec{}, inv, 5*time.Second); res.Err != nil {
								failed.Store(res.Err)
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
			})
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))
