package exchange

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// A handler that ignores its context does not hold Shutdown past ctx: the
// connections and the listener are closed, Shutdown returns ctx's error
// within ctx plus closeGrace (and the go-away flush), and the handler's
// goroutine ends when the handler returns (tester10 finding 3).
func TestServerShutdownLeavesAHandlerIgnoringItsContext(t *testing.T) {
	for _, mode := range []string{"pool", "adaptive", "direct"} {
		t.Run(mode, func(t *testing.T) {
			started, release, returned := make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
			f := startServer(t, mode == "adaptive", func(o *Options) {
				o.Direct, o.Adaptive = mode == "direct", mode == "adaptive"
				o.Handler = HandlerFunc(func(ctx context.Context, req *Request) spi.Result {
					started <- struct{}{}
					<-release // ignores ctx
					close(returned)
					return spi.Result{Value: "late"}
				})
			})
			ch := f.dial(nil)
			t.Cleanup(func() { // before the fixture's Close, which waits for every goroutine
				select {
				case <-release:
				default:
					close(release)
				}
				<-returned
			})
			errc := make(chan error, 1)
			go func() { errc <- ch.Invoke(context.Background(), mpCodec{}, echoInv("Stuck"), 30*time.Second).Err }()
			select {
			case <-started:
			case <-time.After(5 * time.Second):
				t.Fatal("the request never reached the handler")
			}
			const bound = 300 * time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			start := time.Now()
			err := f.srv.Shutdown(ctx)
			took := time.Since(start)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Shutdown = %v, want deadline exceeded", err)
			}
			if took > bound+3*time.Second { // documented: bound + goAwayFlush + closeGrace
				t.Errorf("Shutdown took %v with a %v context", took, bound)
			}
			t.Logf("Shutdown returned after %v", took)
			wantStatus(t, <-errc, spi.StatusChannelInactive)
			if c, err := net.DialTimeout("tcp", f.addr(), time.Second); err == nil {
				_ = c.Close()
				t.Error("the listener still accepts after Shutdown")
			}
			close(release)
			<-returned
		})
	}
}
