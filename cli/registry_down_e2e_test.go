package cli

import (
	"context"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// Tester finding (item 2): with ZooKeeper down and file.cache, a consumer
// waited connect.timeout for a session, then a second connect.timeout
// registering its consumer entry. Refer now returns within about one
// connect.timeout, calls work from the cache, and the consumer entry
// appears once ZooKeeper is back.
//
// Not parallel: the in-process zookeeper registry logs its warnings to
// slog.Default(), which tests running the command in process (airnode())
// point at their own buffers meanwhile.
func TestZooKeeperDownReferWaitsOneConnectTimeout(t *testing.T) {
	const connect = 2 * time.Second
	zks := startZooKeeper(t)
	reg := zks.URL("session.timeout=4s&connect.timeout=" + connect.String() +
		"&file.cache=" + url.QueryEscape(filepath.Join(t.TempDir(), "cache.json")))
	serveWith(t, "127.0.0.1:0", zks.URL("session.timeout=4s"))
	refer := func(n *kernel.Node) (*kernel.Reference, time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		start := time.Now()
		ref, err := n.Refer(ctx, spi.MustParse("airnode:///demo.Echo"), spi.MustParse(reg))
		if err != nil {
			t.Fatal(err)
		}
		return ref, time.Since(start)
	}
	warm := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	refer(warm) // writes file.cache
	_ = warm.Close()

	zks.Stop()
	t.Cleanup(func() { _ = zks.Restart() })
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	t.Cleanup(func() { _ = n.Close() })
	ref, took := refer(n)
	t.Logf("Refer with ZooKeeper down and file.cache took %v (connect.timeout %v)", rounded(took), connect)
	if took >= connect*7/4 {
		t.Errorf("Refer took %v, want about one connect.timeout (%v): the consumer entry must not wait for a session again", rounded(took), connect)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got string
	if err := ref.Call(ctx, "Echo", []any{"cached"}, &got); err != nil || got != "cached" {
		t.Fatalf("call from file.cache = %q, %v", got, err)
	}

	if err := zks.Restart(); err != nil {
		t.Fatal(err)
	}
	raw := zkClient(t, zks)
	deadline := time.Now().Add(15 * time.Second)
	for {
		children, _, err := raw.Children("/airnode/demo.Echo/consumers")
		if err == nil && len(children) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer entry not created within 15s of ZooKeeper's restart: %v, %v", children, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
