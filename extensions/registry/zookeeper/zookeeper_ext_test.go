package zookeeper_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"go.uber.org/goleak"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/internal/zktest"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

var server *zktest.Server

func TestMain(m *testing.M) {
	if addr := os.Getenv(pausedChildEnv); addr != "" {
		os.Exit(pausedChild(addr)) // TestAL6_PausedProcessSaysSo's child
	}
	s, err := zktest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server = s
	code := m.Run()
	s.Close()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func build(t *testing.T, rawURL string) spi.Registry {
	t.Helper()
	r, err := zookeeper.Builder{}.Build(spi.MustParse(rawURL))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

// rawClient is a plain zk client for inspecting the tree.
func rawClient(t *testing.T) *zk.Conn {
	t.Helper()
	c, _, err := zk.Connect([]string{server.Addr()}, 10*time.Second, zk.WithLogInfo(false), zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

func TestConformance(t *testing.T) {
	spitest.TestRegistry(t, func(t *testing.T) spi.Registry {
		r, err := zookeeper.Builder{}.Build(spi.MustParse(server.URL("root=conformance&session.timeout=5s")))
		if err != nil {
			t.Fatal(err)
		}
		return r
	})
}

func TestBuild(t *testing.T) {
	for _, bad := range []string{
		"zookeeper://",
		"zookeeper://h:2181?root=a/b",
		"zookeeper://h:2181?session.timeout=1ms",
		"zookeeper://h:2181?session.timeout=x",
		"zookeeper://h:2181?connect.timeout=2h",
		"zookeeper://h:2181?sesion.timeout=1s",
		"file:///x",
	} {
		if _, err := (zookeeper.Builder{}).Build(spi.MustParse(bad)); err == nil {
			t.Errorf("Build(%q) succeeded", bad)
		}
	}
	r, err := zookeeper.Builder{}.Build(spi.MustParse("zookeeper://h1:2181?backup=h2:2181,h3:2181&root=x&session.timeout=30s&file.cache=/tmp/c.json"))
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Close() // never connected: nothing to wait for
}

// A misspelt registry URL key gets the key meant, as unknown extension
// names do.
func TestUnknownKeyDidYouMean(t *testing.T) {
	_, err := zookeeper.Builder{}.Build(spi.MustParse("zookeeper://h:2181?sesion.timeout=5s"))
	want := `zookeeper registry: unknown URL key "sesion.timeout" (known: backup, check, connect.timeout, file.cache, root, session.timeout); did you mean "session.timeout"?`
	if err == nil || err.Error() != want {
		t.Errorf("sesion.timeout: %v\nwant %s", err, want)
	}
	_, err = zookeeper.Builder{}.Build(spi.MustParse("zookeeper://h:2181?colour=red"))
	if err == nil || strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), `unknown URL key "colour"`) {
		t.Errorf("colour: %v, want no suggestion", err)
	}
}

// subscribe records every pushed list.
type recorder struct {
	mu    sync.Mutex
	lists [][]spi.URL
	ch    chan struct{}
}

func subscribe(t *testing.T, r spi.Registry, consumer spi.URL) *recorder {
	t.Helper()
	rec := &recorder{ch: make(chan struct{}, 1)}
	sub, err := r.Subscribe(ctx(t), consumer, func(l []spi.URL) {
		rec.mu.Lock()
		rec.lists = append(rec.lists, l)
		rec.mu.Unlock()
		select {
		case rec.ch <- struct{}{}:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sub.Stop)
	return rec
}

func (rec *recorder) last() ([]spi.URL, int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.lists) == 0 {
		return nil, 0
	}
	return rec.lists[len(rec.lists)-1], len(rec.lists)
}

// wait waits until the newest list has exactly the ports given.
func (rec *recorder) wait(t *testing.T, bound time.Duration, ports ...int) {
	t.Helper()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	for {
		l, n := rec.last()
		if n > 0 && hasPorts(l, ports) {
			return
		}
		select {
		case <-rec.ch:
		case <-timer.C:
			t.Fatalf("after %d pushes the list is %v; want ports %v within %v", n, l, ports, bound)
		}
	}
}

func hasPorts(l []spi.URL, ports []int) bool {
	if len(l) != len(ports) {
		return false
	}
	for i, p := range ports {
		if l[i].Port() != p {
			return false
		}
	}
	return true
}

func provider(port int, extra string) spi.URL {
	return spi.MustParse(fmt.Sprintf("airnode://127.0.0.1:%d/demo.Echo?side=provider&timestamp=1700000000000%s", port, extra))
}

var consumer = spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer")

// nodeName is the node name of u's entry in Dubbo's layout: u with its
// interface and category (providers, or consumers for side=consumer),
// encoded once.
func nodeName(u spi.URL) string {
	cat := zookeeper.Providers
	if u.ParamOr(spi.KeySide, "") == "consumer" {
		cat = zookeeper.Consumers
	}
	// Dubbo's toFullString: the parameters' commas, colons and slashes
	// as they are, the rest escaped; then encoded once for the name
	s := u.With(spi.KeyInterface, u.Interface()).With(zookeeper.KeyCategory, cat).String()
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i] + strings.NewReplacer("%2C", ",", "%3A", ":", "%2F", "/").Replace(s[i:])
	}
	return url.QueryEscape(s)
}

func TestLayoutEphemeralNodes(t *testing.T) {
	p := build(t, server.URL("root=layout"))
	u := provider(20880, "")
	if err := p.Register(ctx(t), u); err != nil {
		t.Fatal(err)
	}
	c := rawClient(t)
	children, _, err := c.Children("/layout/demo.Echo/providers")
	if err != nil || len(children) != 1 || children[0] != nodeName(u) {
		t.Fatalf("children = %v, %v", children, err)
	}
	_, stat, err := c.Get("/layout/demo.Echo/providers/" + children[0])
	if err != nil || stat.EphemeralOwner == 0 {
		t.Fatalf("provider node not ephemeral: %+v, %v", stat, err)
	}
	_, stat, err = c.Get("/layout/demo.Echo")
	if err != nil || stat.EphemeralOwner != 0 {
		t.Fatalf("service node not persistent: %+v, %v", stat, err)
	}
	cons := spi.MustParse("consumer://127.0.0.1/demo.Echo?side=consumer")
	if err := p.Register(ctx(t), cons); err != nil {
		t.Fatal(err)
	}
	if children, _, err := c.Children("/layout/demo.Echo/consumers"); err != nil || len(children) != 1 {
		t.Fatalf("consumers = %v, %v", children, err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if children, _, _ := c.Children("/layout/demo.Echo/providers"); len(children) != 0 {
		t.Fatalf("entries left after Close: %v", children)
	}
}

// TestR3_EncodedOnce: a provider URL whose parameter values hold '=', '&',
// '/', '%' registered twice gives one node, named by the URL (as Dubbo's
// toFullString writes it: its slashes as they are) encoded exactly once,
// that decodes back to an equal URL.
func TestR3_EncodedOnce(t *testing.T) {
	p := build(t, server.URL("root=r3"))
	u := provider(20880, "&odd="+url.QueryEscape("a=b&c/d%41%")+"&path="+url.QueryEscape("/x/y"))
	for i := 0; i < 2; i++ {
		if err := p.Register(ctx(t), u); err != nil {
			t.Fatal(err)
		}
	}
	p2 := build(t, server.URL("root=r3"))
	if err := p2.Register(ctx(t), u); err != nil { // another session, same URL
		t.Fatal(err)
	}
	children, _, err := rawClient(t).Children("/r3/demo.Echo/providers")
	if err != nil || len(children) != 1 {
		t.Fatalf("children = %v, %v", children, err)
	}
	if children[0] != nodeName(u) {
		t.Fatalf("node name %q, want %q", children[0], nodeName(u))
	}
	dec, _ := url.QueryUnescape(children[0])
	back, err := spi.Parse(dec)
	if want := u.With(spi.KeyInterface, "demo.Echo").With(zookeeper.KeyCategory, zookeeper.Providers); err != nil || !back.Equal(want) {
		t.Fatalf("decoded %v (%v), want %v", back, err, want)
	}
	if v, _ := back.Param("odd"); v != "a=b&c/d%41%" {
		t.Fatalf("odd = %q", v)
	}
	got, err := build(t, server.URL("root=r3")).Lookup(ctx(t), consumer)
	if err != nil || len(got) != 1 || !got[0].Equal(u) {
		t.Fatalf("Lookup = %v, %v", got, err)
	}
}

func TestDigestACL(t *testing.T) {
	p := build(t, "zookeeper://alice:secret@"+server.Addr()+"?root=acl")
	if err := p.Register(ctx(t), provider(20880, "")); err != nil {
		t.Fatal(err)
	}
	anon := rawClient(t)
	if _, _, err := anon.Children("/acl/demo.Echo/providers"); err != zk.ErrNoAuth {
		t.Fatalf("unauthenticated list: err = %v, want %v", err, zk.ErrNoAuth)
	}
	auth := rawClient(t)
	if err := auth.AddAuth("digest", []byte("alice:secret")); err != nil {
		t.Fatal(err)
	}
	acl, _, err := auth.GetACL("/acl/demo.Echo/providers")
	if err != nil || len(acl) != 1 || acl[0].Scheme != "digest" || !strings.HasPrefix(acl[0].ID, "alice:") {
		t.Fatalf("ACL = %+v, %v", acl, err)
	}
	got, err := build(t, "zookeeper://alice:secret@"+server.Addr()+"?root=acl").Lookup(ctx(t), consumer)
	if err != nil || len(got) != 1 {
		t.Fatalf("Lookup with credentials = %v, %v", got, err)
	}
}

// TestR1_OutageKeepsList stops ZooKeeper for a few seconds: the consumer keeps
// its list and never gets an empty one; a consumer starting during the
// outage gets the file.cache list; after the restart a provider registered
// during the outage appears and one unregistered during it is gone.
func TestR1_OutageKeepsList(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cache.json")
	q := "root=r1&session.timeout=30s&connect.timeout=500ms&file.cache=" + url.QueryEscape(cache)
	p := build(t, server.URL(q))
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	p3 := build(t, server.URL(q))
	if err := p3.Register(ctx(t), provider(3, "")); err != nil {
		t.Fatal(err)
	}
	c := build(t, server.URL(q))
	rec := subscribe(t, c, consumer)
	rec.wait(t, 10*time.Second, 1, 3)

	server.Stop()
	t.Cleanup(func() { _ = server.Restart() })
	time.Sleep(time.Second)

	// A provider started during the outage with check=false: Register
	// queues it (with the default check=true it fails: cfg3_check).
	p2 := build(t, server.URL(q+"&check=false"))
	if err := p2.Register(ctx(t), provider(2, "")); err != nil {
		t.Fatalf("Register during the outage: %v", err)
	}
	// A provider withdrawn during the outage: its delete is queued, and
	// Unregister says the entry stays listed meanwhile (tester67 #2).
	if err := p3.Unregister(ctx(t), provider(3, "")); !errors.Is(err, spi.ErrNotWithdrawn) ||
		!strings.Contains(err.Error(), "zookeeper registry: could not unregister demo.Echo from zookeeper://"+server.Addr()+"/r1: no session") ||
		!strings.Contains(err.Error(), "its entry stays listed until ZooKeeper expires this session, session.timeout (30s)") {
		t.Fatalf("Unregister during the outage: %v; want spi.ErrNotWithdrawn saying the entry stays until the session expires", err)
	}
	// A consumer's entry is informative: its queued delete is no error.
	if err := c.Register(ctx(t), consumer); err != nil {
		t.Fatal(err)
	}
	if err := c.Unregister(ctx(t), consumer); err != nil {
		t.Errorf("Unregister of a consumer entry during the outage: %v; want nil", err)
	}
	// A consumer started during the outage starts from the cache.
	c2 := build(t, server.URL(q))
	rec2 := subscribe(t, c2, consumer)
	rec2.wait(t, 10*time.Second, 1, 3)
	if got, err := c2.Lookup(ctx(t), consumer); err != nil || !hasPorts(got, []int{1, 3}) {
		t.Fatalf("Lookup during the outage = %v, %v", got, err)
	}
	time.Sleep(3 * time.Second)

	if err := server.Restart(); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, 15*time.Second, 1, 2)
	rec2.wait(t, 15*time.Second, 1, 2)
	for _, r := range []*recorder{rec, rec2} {
		r.mu.Lock()
		for i, l := range r.lists {
			if len(l) == 0 {
				t.Errorf("push %d was an empty list", i)
			}
		}
		r.mu.Unlock()
	}
	// An explicit empty list from a healthy server clears.
	_ = p.Close()
	_ = p2.Close()
	_ = p3.Close()
	rec.wait(t, 10*time.Second)
}

// unreachable makes ZooKeeper unreachable through px, its host still
// answering: every connection is closed, new ones at once, until
// px.Refuse(false). A client's session expires while the server stays
// healthy.
func unreachable(px *testproxy.Proxy) {
	px.Refuse(true)
	px.Cut()
}

// lastAcceptBefore returns when px last forwarded a connection before t.
func lastAcceptBefore(px *testproxy.Proxy, t time.Time) time.Time {
	var last time.Time
	for _, a := range px.Accepts() {
		if a.Before(t) {
			last = a
		}
	}
	return last
}

// TestR2_SessionExpiry cuts a provider off ZooKeeper for longer than its
// session timeout: its node is deleted (the healthy server's empty list
// reaches the consumer) and is back by itself shortly after the new session.
func TestR2_SessionExpiry(t *testing.T) {
	px := testproxy.New(t, server.Addr())
	p := build(t, "zookeeper://"+px.Addr()+"?root=r2&session.timeout=1s")
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	c := build(t, server.URL("root=r2"))
	rec := subscribe(t, c, consumer)
	rec.wait(t, 10*time.Second, 1)

	expiries := counters.Registry.SessionExpiries.Load()
	unreachable(px)
	rec.wait(t, 10*time.Second) // session expired: the server deleted the node
	px.Refuse(false)
	resumed := time.Now()
	rec.wait(t, 10*time.Second, 1)
	back := time.Now()
	// The client's first connection after the cut learns the session
	// expired; its next one opens the new session, and the node must be
	// back within 2 s of it (scenario R2).
	newSession := lastAcceptBefore(px, back)
	t.Logf("node back %v after the proxy resumed, %v after the new session's connection",
		back.Sub(resumed).Round(time.Millisecond), back.Sub(newSession).Round(time.Millisecond))
	if d := back.Sub(newSession); d > 2*time.Second {
		t.Errorf("node back %v after the new session's connection, want within 2s", d)
	}
	if n := counters.Registry.SessionExpiries.Load() - expiries; n != 1 {
		t.Errorf("SessionExpiries counted %d, want 1", n)
	}
}

// TestR1_ExpiredSessionsNoEmptyList cuts a consumer and a provider off
// ZooKeeper until both sessions expire: when they come back the consumer
// must not push an empty list while the provider re-registers.
//
// The sessions are of 4 s, not 1 s: a 1 s session's client gives its
// connection up after 667 ms unheard, which a loaded machine reaches
// (after the outage, both sessions expired a second time by themselves
// and the consumer pushed the empty list of that second loss: 1 of 5
// runs under -race beside two CPU hogs). The outage lasts until the
// server has expired both sessions (their ephemeral nodes are gone), not
// a fixed 3 s.
func TestR1_ExpiredSessionsNoEmptyList(t *testing.T) {
	px := testproxy.New(t, server.Addr())
	const session = 4 * time.Second
	q := fmt.Sprintf("?root=r1x&session.timeout=%v", session)
	p := build(t, "zookeeper://"+px.Addr()+q)
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	c := build(t, "zookeeper://"+px.Addr()+q)
	if err := c.Register(ctx(t), spi.MustParse("consumer://127.0.0.1/demo.Echo?side=consumer&pid=1")); err != nil {
		t.Fatal(err) // its node tells when the consumer's session expired
	}
	rec := subscribe(t, c, consumer)
	rec.wait(t, 10*time.Second, 1)
	raw := rawClient(t)
	unreachable(px)
	// both sessions expire on the healthy server
	for deadline := time.Now().Add(session + 15*time.Second); ; {
		ps, _, err1 := raw.Children("/r1x/demo.Echo/providers")
		cs, _, err2 := raw.Children("/r1x/demo.Echo/consumers")
		if err1 == nil && err2 == nil && len(ps) == 0 && len(cs) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server kept the entries %v %v (%v, %v) after the sessions' clients were cut off", ps, cs, err1, err2)
		}
		time.Sleep(50 * time.Millisecond)
	}
	px.Refuse(false)
	// Wait for the provider's node to be back on the server, then for the
	// consumer to have re-listed in its new session.
	deadline := time.Now().Add(15 * time.Second)
	for {
		children, _, err := raw.Children("/r1x/demo.Echo/providers")
		if err == nil && len(children) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("provider did not re-register")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(zookeeper.ExpiryGrace)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for i, l := range rec.lists {
		if len(l) == 0 {
			t.Errorf("push %d was an empty list caused by the outage", i)
		}
	}
}

// A consumer of an unreachable ZooKeeper with no file.cache learns so after
// connect.timeout, not when its own (longer) deadline runs out, and why
// (the last dial's error).
func TestSubscribeUnreachableFailsAfterConnectTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	r := build(t, "zookeeper://"+addr+"?connect.timeout=500ms&session.timeout=4s")
	start := time.Now()
	_, err = r.Subscribe(ctx(t), spi.MustParse("airnode:///demo.Echo"), func([]spi.URL) {})
	if err == nil || !strings.Contains(err.Error(), "no session") || !strings.Contains(err.Error(), "file.cache") ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Subscribe = %v, want a no-session error naming file.cache and the last dial's error", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Subscribe took %v, want about connect.timeout (500ms)", d)
	}
}

// Tester finding: a consumer started from file.cache while ZooKeeper is
// unreachable waited connect.timeout for its first list, then a second
// connect.timeout registering its consumer entry. Once a wait has run out,
// Register queues the entry and returns at once; the entry is created when
// a session is back. session.timeout is 10 s: with 4 s (pings every 1.3 s,
// the connection given up after 2.7 s of silence) a loaded machine could
// drop the session the test needs up at its end.
func TestRegisterDoesNotWaitAgainWhenKnownDown(t *testing.T) {
	const connect = 800 * time.Millisecond
	px := testproxy.New(t, server.Addr())
	cache := filepath.Join(t.TempDir(), "cache.json")
	query := func(connect time.Duration) string {
		return fmt.Sprintf("?root=down&session.timeout=10s&connect.timeout=%v&file.cache=%s", connect, url.QueryEscape(cache))
	}
	q := query(connect)
	// the provider and the consumer writing file.cache are set-up, with
	// ZooKeeper up: they may wait 10 s for their first session (800 ms was
	// too short for a loaded machine: "no session ... cannot register")
	p := build(t, server.URL(query(10 * time.Second)[1:]))
	if err := p.Register(ctx(t), provider(1, "")); err != nil {
		t.Fatal(err)
	}
	warm := build(t, "zookeeper://"+px.Addr()+query(10*time.Second))
	subscribe(t, warm, consumer).wait(t, 10*time.Second, 1) // writes file.cache
	_ = warm.Close()

	unreachable(px) // ZooKeeper unreachable: connections are closed at once
	c := build(t, "zookeeper://"+px.Addr()+q)
	start := time.Now()
	rec := subscribe(t, c, consumer)
	rec.wait(t, 10*time.Second, 1) // from file.cache, after connect.timeout
	listed := time.Since(start)
	entry := spi.MustParse("consumer://127.0.0.1/demo.Echo?side=consumer&pid=1")
	before := time.Now()
	if err := c.Register(ctx(t), entry); err != nil {
		t.Fatalf("Register with no session: %v, want nil (queued)", err)
	}
	registered := time.Since(before)
	t.Logf("first list from file.cache after %v; consumer Register returned after %v (connect.timeout %v)",
		listed.Round(time.Millisecond), registered.Round(time.Millisecond), connect)
	if registered >= connect {
		t.Errorf("Register waited %v, a second connect.timeout (%v), although the registry knew it had no session", registered, connect)
	}

	px.Refuse(false)
	raw := rawClient(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		children, _, err := raw.Children("/down/demo.Echo/consumers")
		if err == nil && len(children) == 1 && children[0] == nodeName(entry) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("consumer entry not created after ZooKeeper came back: %v, %v", children, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// With a session up again, the next wait is a real one: a Register of
	// a new entry creates it before returning.
	second := spi.MustParse("consumer://127.0.0.1/demo.Echo?side=consumer&pid=2")
	if err := c.Register(ctx(t), second); err != nil {
		t.Fatal(err)
	}
	if _, _, err := raw.Get("/down/demo.Echo/consumers/" + nodeName(second)); err != nil {
		t.Fatalf("entry registered with a session up is not there at once: %v", err)
	}
}

// ZooKeeper is shared by every process using the ensemble
// (spi.RegistryReacher).
func TestReachIsShared(t *testing.T) {
	if got := (zookeeper.Builder{}).Reach(); got != spi.ReachShared {
		t.Errorf("Reach() = %v, want shared", got)
	}
}

// Tester8 #10: Dubbo writes the root as an absolute path; root=/teamA is
// the node /teamA, the same as root=teamA, and /a/b is still refused.
func TestRootWithLeadingSlash(t *testing.T) {
	p := build(t, server.URL("root=/teamA"))
	u := provider(20881, "")
	if err := p.Register(ctx(t), u); err != nil {
		t.Fatal(err)
	}
	if children, _, err := rawClient(t).Children("/teamA/demo.Echo/providers"); err != nil || len(children) != 1 {
		t.Fatalf("/teamA/demo.Echo/providers = %v, %v", children, err)
	}
	got, err := build(t, server.URL("root=teamA")).Lookup(ctx(t), consumer)
	if err != nil || len(got) != 1 || !got[0].Equal(u) {
		t.Fatalf("root=teamA Lookup = %v, %v; want root=/teamA's provider", got, err)
	}
	_, err = zookeeper.Builder{}.Build(spi.MustParse("zookeeper://h:2181?root=/a/b"))
	if err == nil || !strings.Contains(err.Error(), `root="/a/b"`) || !strings.Contains(err.Error(), "root=/teamA") {
		t.Fatalf("root=/a/b: %v", err)
	}
}
