package exchange_test

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// bigCounter serves "Big" (any argument), counting the calls it ran, and
// "Echo".
type bigCounter struct{ ran *atomic.Int64 }

func (b bigCounter) Serve(ctx context.Context, req *exchange.Request) spi.Result {
	if req.Method == "Big" {
		b.ran.Add(1)
		return spi.Result{Value: "ok"}
	}
	return demo{}.Serve(ctx, req)
}

// TestT2_LargeRequestsToAStalledProvider (fix-bj, tester87; case T2): 16
// calls of 2 MiB each (timeout 1 s) at once to a provider that reads
// nothing (a loopback proxy paused in front of it: kill -STOP). Over
// both transports only the requests some of whose bytes went out are
// SERVER_TIMEOUT; the rest are withdrawn, CLIENT_TIMEOUT "never sent".
// Over smux each request is on a stream of its own, and the session's
// credit (twice the provider's 2 MiB stream window) lets two of them go
// out: the other streams had handed nothing to the connection, yet all
// 16 were SERVER_TIMEOUT "while its request was being written". Once the
// provider reads again it runs only the SERVER_TIMEOUT ones (the
// withdrawn streams end empty, and the connection carries on).
func TestT2_LargeRequestsToAStalledProvider(t *testing.T) {
	for name, tr := range transports(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l, err := tr.Listen("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var ran atomic.Int64
			srv := exchange.NewServer(l, exchange.Options{Codec: codecByID, Handler: bigCounter{&ran}, Logger: quiet})
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve() }()
			p := testproxy.New(t, srv.Addr().String())
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			sess, err := tr.Dial(ctx, p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			ch := exchange.NewChannel(sess, exchange.Options{Side: spi.Consumer, Codec: codecByID, Logger: quiet})
			t.Cleanup(func() {
				p.Pause(false)
				ch.Close("test done")
				ch.Wait()
				srv.Close()
				if err := <-errc; err != nil {
					t.Errorf("Serve: %v", err)
				}
			})
			echo := func(timeout time.Duration) error {
				return ch.Invoke(context.Background(), msgpack.Codec{}, &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"hi"}}, timeout).Err
			}
			if err := echo(3 * time.Second); err != nil { // connected, the provider's windows known
				t.Fatal(err)
			}

			p.Pause(true)
			big := bytes.Repeat([]byte{1}, 2<<20)
			var mu sync.Mutex
			statuses := map[spi.Status]int{}
			encoding := 0 // CLIENT_TIMEOUTs whose request was still being encoded
			var wg sync.WaitGroup
			for range 16 {
				wg.Go(func() {
					start := time.Now()
					err := ch.Invoke(context.Background(), msgpack.Codec{}, &spi.Invocation{Service: "demo.Echo", Method: "Big", Args: []any{big}}, time.Second).Err
					el := time.Since(start)
					st := spi.StatusOf(err)
					mu.Lock()
					defer mu.Unlock()
					statuses[st]++
					if st == spi.StatusClientTimeout && strings.Contains(err.Error(), "encoding") {
						encoding++
					}
					switch {
					// "withdrawn, never sent", or under load "encoding its
					// ... request (never sent)": either way no byte left
					case st == spi.StatusClientTimeout && !strings.Contains(err.Error(), "never sent"),
						st == spi.StatusServerTimeout && !strings.Contains(err.Error(), "while its request was being written") && !strings.Contains(err.Error(), "waiting for the response"),
						st != spi.StatusClientTimeout && st != spi.StatusServerTimeout:
						t.Errorf("call: %v; want CLIENT_TIMEOUT (never sent) or SERVER_TIMEOUT (being written, or written)", err)
					}
					if el < 900*time.Millisecond || el > 10*time.Second {
						t.Errorf("call ended after %v, want at its 1 s timeout: %v", el, err)
					}
				})
			}
			wg.Wait()
			t.Logf("%s: statuses %v (%d timed out while encoding)", name, statuses, encoding)
			sent := statuses[spi.StatusServerTimeout]
			// Under -race on a loaded machine the 2 MiB requests' encoding
			// can outlast the 1 s timeout of all 16 (CI, load 20): none is
			// then being written, which the writes this test is about
			// cannot show; at least one was still being encoded then.
			if statuses[spi.StatusClientTimeout] < 10 || (sent < 1 && encoding == 0) || statuses[spi.StatusClientTimeout]+sent != 16 {
				t.Fatalf("statuses %v (%d timed out while encoding); want at least 10 of 16 CLIENT_TIMEOUT (their bytes never left), the few being written SERVER_TIMEOUT", statuses, encoding)
			}
			if n := ch.Stats().Pending; n != 0 {
				t.Fatalf("%d pending entries left behind", n)
			}

			// The provider reads again: it runs the requests that were
			// being written, never a withdrawn one, and the connection
			// carries on.
			p.Pause(false)
			if err := echo(10 * time.Second); err != nil {
				t.Fatalf("call after the provider read again: %v", err)
			}
			if !waitForExt(10*time.Second, func() bool { return ran.Load() >= int64(sent) }) {
				t.Fatalf("provider ran %d of the %d requests being written", ran.Load(), sent)
			}
			time.Sleep(300 * time.Millisecond) // time for a withdrawn request to arrive, if one had been sent
			if got := ran.Load(); got != int64(sent) {
				t.Fatalf("provider ran %d Big calls, want the %d SERVER_TIMEOUT ones only (a withdrawn request reached it)", got, sent)
			}
			if err := echo(5 * time.Second); err != nil {
				t.Fatalf("call at the end: %v", err)
			}
		})
	}
}

// waitForExt polls cond every 10 ms until it holds (true) or d passes.
func waitForExt(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}
