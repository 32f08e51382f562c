package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// t71Provider exports the demo service on loopback (real TCP) and returns
// its address.
func t71Provider(t *testing.T, query string) string {
	t.Helper()
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"+query))
	if err != nil {
		t.Fatal(err)
	}
	return e.URL().Address()
}

// TestT71_MethodKeyErrorsNameTheKeyAtRefer (tester71 #4): every bad
// method-level value fails Refer naming the key as written; before, a
// method's loadbalance or cluster failed with the service level's words,
// and a method's codec or timeout passed Refer and failed every call.
func TestT71_MethodKeyErrorsNameTheKeyAtRefer(t *testing.T) {
	addr := t71Provider(t, "")
	c := NewNode(testCatalogs(t), WithLogger(quiet))
	defer c.Close()
	for q, want := range map[string]string{
		"methods.Echo.loadbalance=nope": `kernel: refer demo.Echo: URL key "methods.Echo.loadbalance": unknown loadbalance "nope" (available: `,
		"methods.Echo.cluster=nope":     `kernel: refer demo.Echo: URL key "methods.Echo.cluster": unknown cluster "nope" (available: `,
		"Echo.loadbalance=nope":         `kernel: refer demo.Echo: URL key "Echo.loadbalance": unknown loadbalance "nope" (available: `,
		"methods.Nope.loadbalance=nope": `kernel: refer demo.Echo: URL key "methods.Nope.loadbalance": unknown loadbalance "nope" (available: `,
		"methods.Echo.codec=nope":       `kernel: refer demo.Echo: URL key "methods.Echo.codec": unknown codec "nope" (available: `,
		"methods.Echo.timeout=abc":      `kernel: refer demo.Echo: invalid value "abc" for URL key "methods.Echo.timeout": want `,
		"Echo.timeout=0":                `kernel: refer demo.Echo: invalid value "0" for URL key "Echo.timeout": want `,
		"methods.Echo.retries=abc":      `invalid value "abc" for URL key "methods.Echo.retries": want `, // failover's Build says it
		"methods.Echo.actives=-1":       `kernel: refer demo.Echo: invalid value "-1" for URL key "methods.Echo.actives": want `,
		"methods.Echo.hash.nodes=0":     `invalid value "0" for URL key "methods.Echo.hash.nodes": want `,
	} {
		r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/demo.Echo?"+q), spi.URL{})
		if err == nil {
			_ = r.Close()
			t.Errorf("Refer with %s passed; want %q", q, want)
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Refer with %s:\n got %v\nwant %q", q, err, want)
		}
	}
	// the service level's error is as before: no key named
	_, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/demo.Echo?loadbalance=nope"), spi.URL{})
	if err == nil || !strings.HasPrefix(err.Error(), `kernel: refer demo.Echo: unknown loadbalance "nope" (available: `) {
		t.Errorf("service-level loadbalance=nope: %v", err)
	}
	// good method-level values still refer and call
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/demo.Echo?methods.Echo.codec=json&methods.Echo.timeout=2s&methods.Echo.retries=1&methods.Echo.loadbalance=roundrobin"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil || got != "x" {
		t.Fatalf("Echo: %v, %v", got, err)
	}
}

// TestT71_MethodKeysOfUnknownMethodsAndPerConnectionKeysWarn (tester71
// #4): with the method list known (methods= in the URL), a key for a
// method not in it is warned of, naming the method and listing the
// known ones, and ignored (even a bad value: it sets nothing); a
// method-level form of a per-connection key (transport, heartbeat,
// connect.timeout) is warned of as having no effect per method, as
// methods.Echo.weight is; a method's codec is applied per call and gets
// no such warning. A direct reference without methods= still refers.
func TestT71_MethodKeysOfUnknownMethodsAndPerConnectionKeysWarn(t *testing.T) {
	addr := t71Provider(t, "")
	var logs syncBuffer
	c := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	defer c.Close()
	q := "methods=Echo,Sleep&methods.Nope.loadbalance=nope&methods.Nope.timeout=abc&methods.Echo.transport=tcp&methods.Echo.heartbeat=nope&Echo.connect.timeout=1s&methods.Echo.codec=json"
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/demo.Echo?"+q), spi.URL{})
	if err != nil {
		t.Fatalf("Refer: %v; a key of a method the URL does not list sets nothing and must not fail", err)
	}
	defer r.Close()
	if got, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil || got != "x" {
		t.Fatalf("Echo: %v, %v", got, err)
	}
	out := logs.String()
	for _, want := range []string{
		`msg="method-level URL key names no method of the provider (ignored)" component=kernel service=demo.Echo provider=` + addr + ` err="URL key \"methods.Nope.loadbalance\" sets loadbalance for method Nope, but service demo.Echo has no method Nope (methods: Echo, Sleep)`,
		`URL key \"methods.Nope.timeout\" sets timeout for method Nope, but service demo.Echo has no method Nope (methods: Echo, Sleep)`,
		`msg="URL key has no effect per method (ignored)" component=kernel service=demo.Echo key=methods.Echo.transport value=tcp why="transport is chosen per connection"`,
		`msg="URL key has no effect per method (ignored)" component=kernel service=demo.Echo key=methods.Echo.heartbeat value=nope why="heartbeat is chosen per connection"`,
		`msg="URL key has no effect per method (ignored)" component=kernel service=demo.Echo key=Echo.connect.timeout value=1s why="connect.timeout is chosen per connection"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s\nlogs:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "key=methods.Echo.transport"); n != 1 {
		t.Errorf("%d warnings of methods.Echo.transport, want 1:\n%s", n, out)
	}
	if n := strings.Count(out, `methods.Nope.timeout\" sets`); n != 1 {
		t.Errorf("%d warnings of methods.Nope.timeout, want 1:\n%s", n, out)
	}
	if strings.Contains(out, "codec") {
		t.Errorf("a method's codec is applied per call: no warning wanted:\n%s", out)
	}

	// a direct reference without methods= does not know them: it refers
	d, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+addr+"/demo.Echo?methods.Nope.timeout=2s"), spi.URL{})
	if err != nil {
		t.Fatalf("direct Refer without methods=: %v", err)
	}
	_ = d.Close()
}

// TestT71_MethodLevelKeysAtExport (tester71 #4): a provider's bad
// method-level value fails Export naming the key; a per-connection key
// written per method is warned of as having no effect.
func TestT71_MethodLevelKeysAtExport(t *testing.T) {
	var logs syncBuffer
	p := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownWait(0))
	defer p.Close()
	for q, want := range map[string]string{
		"methods.Echo.retries=abc": `kernel: export demo.Echo: invalid value "abc" for URL key "methods.Echo.retries": want `,
		"methods.Echo.codec=nope":  `kernel: export demo.Echo: URL key "methods.Echo.codec": unknown codec "nope" (available: `,
	} {
		_, err := p.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+q))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Export with %s: %v; want %q", q, err, want)
		}
	}
	if _, err := p.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?methods.Echo.transport=tcp")); err != nil {
		t.Fatal(err)
	}
	if want := `msg="export demo.Echo: methods.Echo.transport has no effect: transport is chosen per connection" component=kernel service=demo.Echo key=methods.Echo.transport`; !strings.Contains(logs.String(), want) {
		t.Errorf("log lacks %s\nlogs:\n%s", want, logs.String())
	}
}

// TestT71_CheckGetsOneWarningFittingTheSide (tester71 #8): check= got a
// registry warning naming ZooKeeper (not in use) and the consumer's
// advice, on a provider too. A consumer gets the one Dubbo warning
// (Refer never checks; WaitAvailable); a provider one warning that it is
// a consumer key, naming no ZooKeeper when none is its registry.
func TestT71_CheckGetsOneWarningFittingTheSide(t *testing.T) {
	var plogs syncBuffer
	p := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&plogs, nil))), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?check=false"))
	if err != nil {
		t.Fatal(err)
	}
	out := plogs.String()
	if want := `msg="URL key is a consumer's and has no effect on a provider (ignored)" component=kernel service=demo.Echo key=check why="check is Dubbo's reference check`; !strings.Contains(out, want) || strings.Count(out, "key=check") != 1 {
		t.Errorf("provider: want one warning %s\nlogs:\n%s", want, out)
	}
	for _, bad := range []string{"zookeeper", "WaitAvailable", "Refer never checks"} {
		if strings.Contains(out, bad) {
			t.Errorf("provider's warning of check names %s:\n%s", bad, out)
		}
	}

	var clogs syncBuffer
	c := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&clogs, nil))))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?check=true"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out = clogs.String()
	if want := `msg="URL key is Dubbo's and airnode does not implement it (ignored)" component=kernel service=demo.Echo key=check instead="Refer never checks for providers`; !strings.Contains(out, want) || !strings.Contains(out, "WaitAvailable") {
		t.Errorf("consumer: want %s\nlogs:\n%s", want, out)
	}
	if n := strings.Count(out, "key=check"); n != 1 {
		t.Errorf("consumer: %d warnings of check, want 1:\n%s", n, out)
	}
	if strings.Contains(out, "zookeeper") || strings.Contains(out, "registry's") {
		t.Errorf("consumer's warning of check names a registry:\n%s", out)
	}
}

// TestT71_ProviderCheckNamesTheRegistrysCheckOnlyForZooKeeper (tester71
// #8): a provider's check= names the ZooKeeper registry's own check only
// when the export's registry is ZooKeeper.
func TestT71_ProviderCheckNamesTheRegistrysCheckOnlyForZooKeeper(t *testing.T) {
	u := spi.MustParse("airnode://127.0.0.1:1/demo.Echo?check=false")
	for reg, want := range map[string]bool{"zookeeper://127.0.0.1:2181": true, "file:///tmp/x": false, "": false} {
		var logs syncBuffer
		n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		var regURL spi.URL
		if reg != "" {
			regURL = spi.MustParse(reg)
		}
		n.warnUnsupportedKeys(u, "demo.Echo", regURL)
		_ = n.Close()
		out := logs.String()
		if strings.Count(out, "level=WARN") != 1 || strings.Contains(out, "zookeeper://HOST:PORT?check=false") != want {
			t.Errorf("registry %q: want one warning, naming the registry's check: %v:\n%s", reg, want, out)
		}
	}
}
