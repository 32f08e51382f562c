package zookeeper_test

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/spi"
)

// ZooKeeper stopped, then started again: a registry that had a session and
// lost it for connect.timeout knows ZooKeeper is down and answers at once
// — Lookup and Services from file.cache (FromCache says so, with the
// list's age and how long ZooKeeper has been unreachable), a Subscribe's
// first list from file.cache, a key the cache does not hold with an error
// naming the server and how long it has been unreachable — instead of
// waiting connect.timeout each. A fresh registry (a first contact) still
// waits connect.timeout once. After the restart the answers are live again.
func TestKnownDownAnswersAtOnce(t *testing.T) {
	const connect = 2 * time.Second
	const atOnce = connect / 2 // well under a connect.timeout: no wait happened
	cache := filepath.Join(t.TempDir(), "cache.json")
	q := "root=knowndown&session.timeout=30s&connect.timeout=" + connect.String() + "&file.cache=" + url.QueryEscape(cache)
	p := build(t, server.URL(q))
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	c := build(t, server.URL(q)).(*zookeeper.Registry)
	if l, err := c.Lookup(ctx(t), consumer); err != nil || !hasPorts(l, []int{1}) {
		t.Fatalf("Lookup with ZooKeeper up = %v, %v", l, err)
	}
	if _, ok := c.FromCache(consumer.ServiceKey()); ok {
		t.Fatal("a live answer is reported as from file.cache")
	}

	server.Stop()
	stopped := time.Now()
	t.Cleanup(func() { _ = server.Restart() })
	// Lookups right after the loss wait what is left of connect.timeout
	// (one made before the client noticed the loss answers from the cache
	// at once), until there has been no session for connect.timeout.
	deadline := time.Now().Add(15 * time.Second)
	for first := true; ; first = false {
		l, err := c.Lookup(ctx(t), consumer)
		if err != nil || !hasPorts(l, []int{1}) {
			t.Fatalf("Lookup during the outage = %v, %v; want the cached list", l, err)
		}
		if first {
			t.Logf("first Lookup after ZooKeeper stopped answered %v after the stop", time.Since(stopped).Round(time.Millisecond))
		}
		if n, ok := c.FromCache(consumer.ServiceKey()); ok && n.Unreachable >= connect {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry does not know ZooKeeper is down %v after stopping it", time.Since(stopped))
		}
		time.Sleep(20 * time.Millisecond)
	}

	timed := func(what string, f func()) {
		t.Helper()
		start := time.Now()
		f()
		if d := time.Since(start); d >= atOnce {
			t.Errorf("%s took %v with ZooKeeper known down; want an answer at once (connect.timeout %v)", what, d.Round(time.Millisecond), connect)
		}
	}
	timed("Lookup of a cached key", func() {
		l, err := c.Lookup(ctx(t), consumer)
		if err != nil || !hasPorts(l, []int{1}) {
			t.Errorf("Lookup = %v, %v; want the cached list", l, err)
		}
		n, ok := c.FromCache(consumer.ServiceKey())
		if !ok || n.Path != cache || n.Saved.IsZero() || time.Since(n.Saved) > time.Minute || n.Unreachable < connect {
			t.Errorf("FromCache = %+v, %v; want the cache's path, its saved time and at least %v unreachable", n, ok, connect)
		}
		if s := n.String(); !strings.Contains(s, "file.cache "+cache+", saved ") || !strings.Contains(s, "ZooKeeper "+server.Addr()+" unreachable for ") {
			t.Errorf("note %q", s)
		}
	})
	timed("Lookup of a key not cached", func() {
		_, err := c.Lookup(ctx(t), spi.MustParse("airnode:///other.Svc"))
		if err == nil || !strings.Contains(err.Error(), "no session with "+server.Addr()+": unreachable for ") ||
			!strings.Contains(err.Error(), "no file.cache entry for other.Svc") || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("Lookup = %v; want an error naming the server, how long it is unreachable, the missing entry and the last dial", err)
		}
	})
	timed("Services", func() {
		keys, err := c.Services(ctx(t))
		if err != nil || !slices.Equal(keys, []string{"demo.Echo"}) {
			t.Errorf("Services = %v, %v; want file.cache's [demo.Echo]", keys, err)
		}
		if _, ok := c.FromCache(""); !ok {
			t.Error("Services from file.cache: FromCache(\"\") says live")
		}
	})
	timed("Subscribe and its first list", func() {
		rec := subscribe(t, c, consumer)
		rec.wait(t, atOnce, 1)
	})
	timed("Subscribe to a key not cached", func() {
		_, err := c.Subscribe(ctx(t), spi.MustParse("airnode:///other.Svc"), func([]spi.URL) {})
		if err == nil || !strings.Contains(err.Error(), "unreachable for ") || !strings.Contains(err.Error(), "no file.cache entry for other.Svc") {
			t.Errorf("Subscribe = %v; want the down error", err)
		}
	})
	// A registry's first contact still waits connect.timeout.
	fresh := build(t, server.URL(q))
	start := time.Now()
	if l, err := fresh.Lookup(ctx(t), consumer); err != nil || !hasPorts(l, []int{1}) {
		t.Fatalf("first contact's Lookup = %v, %v", l, err)
	}
	if d := time.Since(start); d < connect*9/10 {
		t.Errorf("a first contact answered from file.cache after %v; want it to wait connect.timeout (%v) for a session", d, connect)
	}
	timed("the fresh registry's second Lookup", func() { _, _ = fresh.Lookup(ctx(t), consumer) })

	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(15 * time.Second)
	for {
		l, err := c.Lookup(ctx(t), consumer)
		if _, cached := c.FromCache(consumer.ServiceKey()); err == nil && !cached && hasPorts(l, []int{1}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no live Lookup within 15s of the restart: %v, %v", l, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if keys, err := c.Services(ctx(t)); err != nil || !slices.Contains(keys, "demo.Echo") {
		t.Fatalf("Services after the restart = %v, %v", keys, err)
	}
	if _, ok := c.FromCache(""); ok {
		t.Error("Services after the restart: FromCache(\"\") still says cached")
	}
}

// A file.cache written before saved times were kept (a bare
// {"service key": [urls]} object) is still read; its lists' age is
// unknown.
func TestEarlierCacheFormatIsRead(t *testing.T) {
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache.json")
	raw := `{"demo.Echo": ["` + provider(7, "").String() + `"]}`
	if err := writeFile(cache, raw); err != nil {
		t.Fatal(err)
	}
	c := build(t, "zookeeper://"+deadAddr(t)+"?connect.timeout=200ms&session.timeout=4s&file.cache="+url.QueryEscape(cache)).(*zookeeper.Registry)
	l, err := c.Lookup(ctx(t), consumer)
	if err != nil || !hasPorts(l, []int{7}) {
		t.Fatalf("Lookup = %v, %v; want the earlier cache's list", l, err)
	}
	if n, ok := c.FromCache(consumer.ServiceKey()); !ok || !n.Saved.IsZero() || !strings.Contains(n.String(), "saved at an unknown time") {
		t.Fatalf("FromCache = %+v, %v (%s)", n, ok, n)
	}
}

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o600) }

// deadAddr returns a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
