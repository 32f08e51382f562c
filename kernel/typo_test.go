package kernel

import (
	"fmt"
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
