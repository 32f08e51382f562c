package kernel

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/airnode/airnode/kernel/extension/extensiontest"
	"github.com/airnode/airnode/spi"
)

// A key only an extension declares (spi.KeyDescriber) is known: no
// warning for smux.buffer, shortestresponse.slidePeriod or failover's
// idempotent, written plainly or per method; a misspelling of one, two
// edits away, gets a did-you-mean naming it.
func TestExtensionKeysAreKnown(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	u := spi.MustParse("airnode://h:1/demo.Echo?smux.buffer=1MiB&shortestresponse.slidePeriod=10s&methods.Echo.idempotent=true&session.timeout=5s" +
		"&smux.bffr=1MiB&shortestresponse.slidPeriod=10s&methods.Echo.idempotnt=true")
	got := fmt.Sprint(n.likelyTypos(u))
	want := "[[methods.Echo.idempotnt methods.Echo.idempotent] [shortestresponse.slidPeriod shortestresponse.slidePeriod] [smux.bffr smux.buffer]]"
	if got != want {
		t.Fatalf("likelyTypos = %s, want %s", got, want)
	}
}

// The did-you-mean names the closest known key, not the first one within
// two edits: "smux.bufer" is one edit from the smux transport's
// smux.buffer and two from smux.buffers, which a cluster declares (and
// clusters are listed before transports).
func TestTypoNamesTheClosestKey(t *testing.T) {
	cat := testCatalogs(t)
	if err := cat.Cluster.Register(&keyedCluster{extensiontest.Cluster{Ext: extensiontest.Ext{ExtName: "acme.buffers"}}}, "/opt/buffers"); err != nil {
		t.Fatal(err)
	}
	n := NewNode(cat, WithLogger(quiet))
	defer n.Close()
	got := fmt.Sprint(n.likelyTypos(spi.MustParse("airnode://h:1/demo.Echo?smux.bufer=1MiB")))
	if want := "[[smux.bufer smux.buffer]]"; got != want {
		t.Fatalf("likelyTypos = %s, want %s", got, want)
	}
}

// keyedCluster is a stand-in cluster declaring smux.buffers.
type keyedCluster struct{ extensiontest.Cluster }

func (keyedCluster) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{{Key: "smux.buffers", Type: spi.KeyTypeInt, Doc: "a key two edits from smux.bufer"}}
}

// keyedLB is a stand-in balancer declaring one key of its own.
type keyedLB struct{ extensiontest.LoadBalance }

func (keyedLB) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{{Key: "p2c.choices", Type: spi.KeyTypeInt, Default: "2", Doc: "providers sampled per pick"}}
}

// The known keys come from the catalogs: a plugin-style extension's key
// is a stranger (no warning: it is far from every key) until the
// extension is registered, then known, and its misspelling is named.
func TestKnownKeysComeFromTheCatalogs(t *testing.T) {
	cat := testCatalogs(t)
	n := NewNode(cat, WithLogger(quiet))
	defer n.Close()
	u := spi.MustParse("airnode://h:1/demo.Echo?p2c.choices=3&p2c.choise=3")
	if got := n.likelyTypos(u); len(got) != 0 {
		t.Fatalf("before registering: likelyTypos = %v, want none", got)
	}
	if err := cat.LoadBalance.Register(&keyedLB{extensiontest.LoadBalance{Ext: extensiontest.Ext{ExtName: "acme.p2c"}}}, "/opt/p2c"); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(n.likelyTypos(u)), "[[p2c.choise p2c.choices]]"; got != want {
		t.Fatalf("after registering: likelyTypos = %s, want %s", got, want)
	}
}

// Dubbo's "<m>.<key>" is checked by its key as "methods.<m>.<key>" is: a
// misspelt "Echo.timout" gets the did-you-mean "Echo.timeout", in the form written (the whole key is
// more than two edits from any), for Echo in "methods" or, without
// "methods", an exported method name; "heartbeat.retires" is checked whole,
// and a correct "Echo.timeout" or "heartbeat.retries" gets no warning.
func TestTypoInDubboMethodKey(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	for q, want := range map[string]string{
		"Echo.timout=200":                        "[[Echo.timout Echo.timeout]]",
		"methods=Echo,Sleep&Sleep.retires=1":     "[[Sleep.retires Sleep.retries]]",
		"heartbeat.retires=5":                    "[[heartbeat.retires heartbeat.retries]]",
		"Echo.timeout=200&heartbeat.retries=5":   "[]",
		"Echo.hash.argumnts=0":                   "[[Echo.hash.argumnts Echo.hash.arguments]]",
		"methods.Echo.timout=1&Echo.idempotnt=1": "[[Echo.idempotnt Echo.idempotent] [methods.Echo.timout methods.Echo.timeout]]",
	} {
		if got := fmt.Sprint(n.likelyTypos(spi.MustParse("airnode://h:1/demo.Echo?" + q))); got != want {
			t.Errorf("%s: likelyTypos = %s, want %s", q, got, want)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a node's
// loggers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Dubbo keys airnode does not implement (mock, async, check,
// serialization, ...) get a warning at Refer naming the key and what to
// use instead, also in their method-level forms, and no did-you-mean
// (tester10 #11: they were accepted silently, while "timout" was named);
// a Dubbo cluster or balancer airnode lacks fails Refer saying what to
// choose instead.
func TestDubboKeysAirnodeDoesNotImplementAreWarned(t *testing.T) {
	var logs syncBuffer
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	defer n.Close()
	u := spi.MustParse("airnode://127.0.0.1:1/t.G?mock=return+null&async=true&check=false&serialization=hessian2&methods.Get.sticky=true&Put.stub=true&owner=me&timeout=1s")
	got := n.unsupportedKeys(u)
	var keys []string
	for _, k := range got {
		keys = append(keys, k[0])
		if k[1] == "" {
			t.Errorf("%s: no advice", k[0])
		}
	}
	if want := []string{"Put.stub", "async", "check", "methods.Get.sticky", "mock", "serialization"}; !slices.Equal(keys, want) {
		t.Fatalf("unsupportedKeys = %q, want %q", keys, want)
	}
	if a, ok := DubboKeyAdvice("mock"); !ok || !strings.HasPrefix(a, "no mock or fallback") {
		t.Errorf("DubboKeyAdvice(mock) = %q, %v", a, ok)
	}
	// tester70 #5: tps= got "did you mean tls?"
	if a, ok := DubboKeyAdvice("tps"); !ok || !strings.HasPrefix(a, "no TPS limit") {
		t.Errorf("DubboKeyAdvice(tps) = %q, %v", a, ok)
	}
	if typos := n.likelyTypos(spi.MustParse("airnode://127.0.0.1:1/t.G?tps=100")); len(typos) != 0 {
		t.Errorf("likelyTypos(tps=100) = %v; want none (it is Dubbo's)", typos)
	}
	if _, ok := DubboKeyAdvice("timeout"); ok {
		t.Error("DubboKeyAdvice(timeout): an airnode key is not Dubbo's unsupported one")
	}
	if typos := n.likelyTypos(u); len(typos) != 0 {
		t.Errorf("likelyTypos = %v; a Dubbo key is no misspelling", typos)
	}
	r, err := n.Refer(ctxT(t), u, spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Close()
	for _, want := range []string{
		`msg="URL key is Dubbo's and airnode does not implement it (ignored)" component=kernel service=t.G key=mock instead="no mock or fallback`,
		`key=serialization instead="the codec key chooses the serialization`,
		`key=methods.Get.sticky instead="no sticky provider`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	if c := strings.Count(logs.String(), "key=mock "); c != 1 {
		t.Errorf("mock warned %d times, want once", c)
	}

	_, err = n.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/t.G?cluster=failback"), spi.URL{})
	if err == nil || !strings.Contains(err.Error(), `unknown cluster "failback"`) || !strings.Contains(err.Error(), "Dubbo's failback (retry later in the background) is not in airnode") {
		t.Errorf("cluster=failback: %v", err)
	}
	// tester82 #11: zone-aware, spelt either way, names an alternative too.
	for _, name := range []string{"zoneaware", "zone-aware"} {
		_, err = n.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/t.G?cluster="+name), spi.URL{})
		if err == nil || !strings.Contains(err.Error(), `unknown cluster "`+name+`"`) || !strings.Contains(err.Error(), "Dubbo's zone-aware (prefer the registry of the caller's zone) is not in airnode: a reference has one registry, so give each zone its own registry (or group)") {
			t.Errorf("cluster=%s: %v", name, err)
		}
	}
}

// Export warns of the Dubbo keys airnode does not implement as Refer does
// (a provider's delay, threadpool, validation).
func TestExportWarnsOfDubboKeysAirnodeDoesNotImplement(t *testing.T) {
	var logs syncBuffer
	p := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownWait(0))
	defer p.Close()
	if _, err := p.Export(ctxT(t), whoService{}, spi.MustParse("airnode://127.0.0.1:0/t.Who?delay=5000&threadpool=fixed&validation=true")); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"delay", "threadpool", "validation"} {
		if want := "service=t.Who key=" + k + " instead="; !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

// tester74: Dubbo 2.6's "default." prefix (default.timeout=200) was taken
// for a method named default's key and accepted silently; it is warned of
// now, naming the key to set.
func TestDubboDefaultPrefixIsWarned(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	got := n.unsupportedKeys(spi.MustParse("airnode://127.0.0.1:1/t.G?default.timeout=200&timeout=1s"))
	if len(got) != 1 || got[0][0] != "default.timeout" || !strings.Contains(got[0][1], "set timeout") {
		t.Fatalf("unsupportedKeys = %q, want default.timeout with advice to set timeout", got)
	}
	// a method named default keeps its Dubbo method-level key
	if got := n.unsupportedKeys(spi.MustParse("airnode://127.0.0.1:1/t.G?methods=default,Get&default.timeout=200")); len(got) != 0 {
		t.Errorf("with a method named default: %q, want none", got)
	}
}
