package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// tester33 F11: a consumer whose connection a provider at its accepts
// limit closes at once gets the first-ping error that explains it, and no
// WARN "channel closed ... open stream: ... use of closed network
// connection" besides (the channel died before its first call: its owner,
// the kernel's first ping, reports it). 10 one-shot references, as 10
// `airnode call`s: the line came with 4 of 5 in tester33's run.
func TestOps4AcceptsRefusalNoOpenStreamWarn(t *testing.T) {
	_, e, _ := exportLimited(t, "accepts=1", nil)
	holder := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = holder.Close() })
	u := spi.MustParse("airnode://" + e.URL().Address() + "/demo.Echo?timeout=5s")
	held, err := holder.Refer(ctxT(t), u, spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := held.Invoke(ctxT(t), "Echo", "x"); err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	for i := range 10 {
		n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownWait(0))
		r, err := n.Refer(ctxT(t), u, spi.URL{})
		if err == nil {
			_, err = r.Invoke(ctxT(t), "Echo", "x")
		}
		if err == nil || !strings.Contains(err.Error(), "during the first ping") {
			t.Errorf("call %d: %v; want the first-ping failure", i, err)
		}
		_ = n.Close()
	}
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, `msg="channel closed"`) {
			t.Errorf("a WARN channel-closed line besides the first-ping error: %s", l)
		}
	}
}
