package kernel

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/testaddr"
	"github.com/airnode/airnode/spi"
)

// H-reg3 item 3 (tester29 6c): a consumer with heartbeat=dual and three
// connections to a provider with heartbeat=idle logs the strategy
// mismatch once for that provider address, not once per connection, and
// not again when it redials them after the provider restarts; each
// provider process logs it once for the consumer's host, not once per
// connection.
func TestReg3_MismatchWarnedOncePerPeer(t *testing.T) {
	addr := testaddr.Reserved(t) // fixed across the provider's restart
	const msg = "heartbeat strategy mismatch"
	cat := testCatalogs(t)
	provider := func(log *logbuf.Buffer) *Node {
		p := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(log, nil))), WithShutdownWait(0))
		if _, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://"+addr+"/demo.Echo?heartbeat=idle")); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var plog1, plog2, clog logbuf.Buffer
	p1 := provider(&plog1)
	c := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&clog, nil))))
	t.Cleanup(func() { _ = c.Close() })
	ref, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/demo.Echo?heartbeat=dual&connections=3"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	// every connection has exchanged hellos: the provider has logged a
	// first mismatch, and calls on all three went through
	waitLogged := func(what string, b *logbuf.Buffer) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(b.String(), msg) {
			if time.Now().After(deadline) {
				t.Fatalf("%s logged no mismatch:\n%s", what, b.String())
			}
			if _, err := ref.Invoke(ctxT(t), "Echo", "x"); err != nil && !strings.Contains(err.Error(), "CHANNEL_INACTIVE") {
				t.Logf("call: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitLogged("provider 1", &plog1)
	for range 30 {
		if _, err := ref.Invoke(ctxT(t), "Echo", "x"); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(500 * time.Millisecond) // the other connections' hellos
	_ = p1.Close()
	p2 := provider(&plog2)
	t.Cleanup(func() { _ = p2.Close() })
	waitLogged("provider 2 (after the consumer redialled)", &plog2)
	time.Sleep(500 * time.Millisecond)
	if n := strings.Count(clog.String(), msg); n != 1 {
		t.Errorf("consumer logged the mismatch %d times for one provider address, want 1:\n%s", n, clog.String())
	}
	if !strings.Contains(clog.String(), "logged once per provider address") || !strings.Contains(clog.String(), "provider="+addr) {
		t.Errorf("consumer's line does not say it is per provider address:\n%s", clog.String())
	}
	for i, b := range []*logbuf.Buffer{&plog1, &plog2} {
		if n := strings.Count(b.String(), msg); n != 1 {
			t.Errorf("provider %d logged the mismatch %d times for one consumer host, want 1:\n%s", i+1, n, b.String())
		}
	}
	if !strings.Contains(plog1.String(), "logged once per consumer host") || !strings.Contains(plog1.String(), "consumer=127.0.0.1:") {
		t.Errorf("provider's line does not say it is per consumer host:\n%s", plog1.String())
	}
}
