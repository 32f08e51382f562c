package kernel

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// A consumer that keeps referring to a service whose only provider was
// killed (its registry entry still listed, as until a ZooKeeper session
// expires) redials it on the address's one backoff: a new reference
// listing the same entry does not start the backoff afresh. Before, each
// new reference reset it (at most once a second), and a consumer
// re-referring every 500 ms made 64 dials in 15.6 s instead of about 8.
// Here, with reconnect.backoff=100ms and a new reference every 200 ms for
// 4 s, the doubling backoff (±20 % jitter) allows at most 6 dials
// (0, 0.1, 0.3, 0.7, 1.5, 3.1 s at the latest); the reset made 12 or more.
func TestHCLI2_RereferKeepsBackoff(t *testing.T) {
	cat := testCatalogs(t)
	regURL := spi.MustParse("memory://hcli2-backoff")
	_, p, entry := listedProvider(t, cat, regURL, "1000")
	addr := entry.Address()
	var log logbuf.Buffer
	c := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))), WithRegistry(regURL))
	defer c.Close()
	u := spi.MustParse("airnode:///demo.Echo?reconnect.backoff=100ms")
	ref, err := c.Refer(ctxT(t), u, spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Invoke(ctxT(t), "Echo", "hi"); err != nil {
		t.Fatal(err)
	}
	_ = p.Close()
	start := time.Now()
	for time.Since(start) < 4*time.Second {
		r, err := c.Refer(ctxT(t), u, spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		time.Sleep(200 * time.Millisecond)
	}
	dials := 0
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.Contains(l, `msg="cannot reconnect to provider"`) && strings.Contains(l, "provider="+addr) {
			dials++
		}
	}
	if dials < 3 || dials > 6 {
		t.Fatalf("%d failed redials of the killed provider in %v of new references every 200 ms; want 3-6 (reconnect.backoff=100ms doubling):\n%s",
			dials, time.Since(start).Round(time.Millisecond), log.String())
	}
	t.Logf("%d failed redials in %v", dials, time.Since(start).Round(time.Millisecond))
}

// listedProvider exports demo.Echo on a free loopback port from a
// provider node of its own, on no registry, and registers its URL with
// the given timestamp in regURL, a memory registry it builds from cat
// (closed at the test's end): the test writes the entry, so that stopping
// the provider leaves it listed, as after kill -9. It returns the
// registry, the provider and the entry.
func listedProvider(t *testing.T, cat *extension.Catalogs, regURL spi.URL, timestamp string) (spi.Registry, *Node, spi.URL) {
	t.Helper()
	b, err := cat.Registry.Get("memory")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := b.Build(regURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	e, err := p.Export(ctxT(t), demo.New("p1", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	entry := e.URL().With("timestamp", timestamp)
	if err := reg.Register(ctxT(t), entry); err != nil {
		t.Fatal(err)
	}
	return reg, p, entry
}
