package kernel

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// A wait given with WithShutdownWait or an export's shutdown.wait is
// waited without a registry too (tester60: the time a readiness probe
// needs to see the node draining before its listener closes); the
// default wait only when something is registered.
func TestShutdownWaitGivenIsKeptWithoutARegistry(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  []Option
		query string
		want  time.Duration
	}{
		{"WithShutdownWait", []Option{WithShutdownWait(600 * time.Millisecond)}, "", 600 * time.Millisecond},
		{"URL key", nil, "?shutdown.wait=600ms", 600 * time.Millisecond},
		{"default", nil, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewNode(testCatalogs(t), append([]Option{WithLogger(quiet)}, tc.opts...)...)
			defer p.Close()
			e, err := p.Export(ctxT(t), &hdrainSvc{started: make(chan struct{}, 1), release: make(chan struct{})}, spi.MustParse("airnode://127.0.0.1:0/shutwait.Svc"+tc.query))
			if err != nil {
				t.Fatal(err)
			}
			if w := p.ShutdownWait(); w != tc.want {
				t.Fatalf("ShutdownWait %v, want %v", w, tc.want)
			}
			addr := e.URL().Address()
			closedAt := make(chan time.Duration, 1)
			began := time.Now()
			go func() {
				for time.Since(began) < 5*time.Second {
					if !dialable(addr) {
						closedAt <- time.Since(began)
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
				closedAt <- -1
			}()
			if err := p.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			took := <-closedAt
			if tc.want > 0 && (took < tc.want-50*time.Millisecond || took > tc.want+2*time.Second) ||
				tc.want == 0 && (took < 0 || took > 500*time.Millisecond) {
				t.Fatalf("listener closed %v after Shutdown began; want after about %v", took, tc.want)
			}
		})
	}
}

// dialable reports whether a TCP connection to addr is accepted.
func dialable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
