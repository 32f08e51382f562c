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

// A listed provider that refuses every connection (a killed provider's
// entry, until its registry session expires) is logged at Warn from its
// 4th failed attempt on (4, 8, 16...), naming the address, the error and
// how long it has failed; attempts 1 to 3 stay at Debug, so a short call
// that fails over says nothing more than its error. It logged nothing
// above Debug, while a provider that died after connecting gets "cannot
// reconnect" Warns (tester67 #3).
func TestT67_3_RefusedProviderWarnsFromFourthAttempt(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens: connection refused
	var log logbuf.Buffer
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&log, nil))), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	if _, err := n.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/demo.Echo?transport=tcp&reconnect.backoff=20ms"), spi.URL{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), "attempt=8") {
		if time.Now().After(deadline) {
			t.Fatalf("no attempt 8 logged within 10s:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var warns []string
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "level=WARN") {
			warns = append(warns, line)
		}
	}
	if len(warns) < 2 || !strings.Contains(warns[0], `msg="cannot connect to provider"`) || !strings.Contains(warns[0], "provider="+addr) ||
		!strings.Contains(warns[0], "attempt=4 ") || !strings.Contains(warns[0], "connection refused") || !strings.Contains(warns[0], "failing_for=") ||
		!strings.Contains(warns[1], "attempt=8 ") {
		t.Errorf("want Warns at attempts 4 and 8 saying cannot connect, refused; got:\n%s", strings.Join(warns, "\n"))
	}
}
