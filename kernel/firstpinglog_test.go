package kernel

import (
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// A provider address whose process accepts connections and answers
// nothing (a stopped process: its kernel still accepts): each failed
// attempt's first ping is the kernel's to log, bounded to attempts 1, 2,
// 4, 8..., and the exchange adds no line of its own per attempt (it logged
// "channel closed ... no answer to the connection's first ping
// failed_calls=1" at Info on every one: the heartbeat's own ping, 100 ms
// here, was the failed call).
func TestFirstPingFailureIsOneLogSource(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c // accepted, never read
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		close(accepted)
		for c := range accepted {
			c.Close()
		}
	})
	var log logbuf.Buffer
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	r, err := n.Refer(ctxT(t), spi.MustParse("airnode://"+l.Addr().String()+"/demo.Echo?transport=tcp&connect.timeout=300ms&reconnect.backoff=50ms&heartbeat.interval=100ms"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	_ = r
	time.Sleep(2 * time.Second) // several attempts of 200 ms each
	s := log.String()
	if c := strings.Count(s, `level=INFO msg="channel closed"`); c != 0 {
		t.Errorf("%d exchange \"channel closed\" lines at Info for first pings that got no answer, want 0:\n%s", c, s)
	}
}
