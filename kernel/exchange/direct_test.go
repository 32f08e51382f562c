package exchange

import (
	"context"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// Options.Direct (Dubbo's dispatcher=direct): requests run on the
// connection's reader, every call is answered, large responses and
// heartbeats still work, and a handler that blocks holds up only its own
// connection.
func TestDirectDispatch(t *testing.T) {
	for _, mux := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "smux"}[mux], func(t *testing.T) {
			f := startServer(t, mux, func(o *Options) { o.Direct = true })
			ch := f.dial(nil)
			concurrentEchoes(t, ch, 200)
			if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Payload", 1<<20), 10*time.Second); res.Err != nil {
				t.Fatalf("1 MiB response: %v", res.Err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := ch.Ping(ctx); err != nil {
				t.Fatalf("ping: %v", err)
			}

			// A blocked handler stops its own connection only.
			blocked := f.dial(nil)
			go blocked.Invoke(context.Background(), mpCodec{}, echoInv("Block"), 2*time.Second)
			time.Sleep(100 * time.Millisecond)
			if res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "other"), 5*time.Second); res.Err != nil {
				t.Fatalf("other connection while one handler blocks: %v", res.Err)
			}
			res := blocked.Invoke(context.Background(), mpCodec{}, echoInv("Echo", "behind"), 300*time.Millisecond)
			if st := spi.StatusOf(res.Err); st != spi.StatusServerTimeout {
				t.Fatalf("call behind a blocked direct handler: %v, want SERVER_TIMEOUT", res.Err)
			}
		})
	}
}
