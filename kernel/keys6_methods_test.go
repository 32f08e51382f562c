package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// Export refuses a method-level key naming a method the service lacks,
// in either form, naming the service's methods and the method meant (as
// Dubbo's checkInterfaceAndMethods); keys that only contain a dot
// (connect.timeout, heartbeat.interval, session.timeout, a plugin's
// acme.timeout) and method keys of real methods pass.
func TestExportRefusesMethodKeysOfNoMethod(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer n.Close()
	for q, want := range map[string]string{
		"Slep.timeout=100":        `URL key "Slep.timeout" sets timeout for method Slep, but service demo.Echo has no method Slep (methods: Echo, Fail, Info, Payload, Sleep); did you mean "Sleep"?`,
		"methods.Ech.timeout=100": `URL key "methods.Ech.timeout" sets timeout for method Ech, but service demo.Echo has no method Ech (methods: Echo, Fail, Info, Payload, Sleep); did you mean "Echo"?`,
		"sleep.retries=1":         `service demo.Echo has no method sleep (methods: Echo, Fail, Info, Payload, Sleep); did you mean "Sleep"?`,
		// lower case and misspelt (fix-cj): no plugin key, one edit from a method case aside
		"slep.timeout=1s":         `URL key "slep.timeout" sets timeout for method slep, but service demo.Echo has no method slep (methods: Echo, Fail, Info, Payload, Sleep); did you mean "Sleep"?`,
		"Slep.loadbalance=random": `URL key "Slep.loadbalance" sets loadbalance for method Slep`,
		"Ech.idempotent=true":     `URL key "Ech.idempotent" sets idempotent for method Ech`,
		"methods.Nope.foo=1":      `has no method Nope (methods: Echo, Fail, Info, Payload, Sleep)`,
	} {
		_, err := n.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+q))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "kernel: export demo.Echo: ") {
			t.Errorf("%s: Export = %v\nwant an error with %s", q, err, want)
		}
		if err != nil && strings.HasPrefix(q, "methods.Nope") && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%s: %v guesses a method far from every one", q, err)
		}
	}
	// Both at once: both named.
	_, err := n.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?Slep.timeout=1&methods.Ech.retries=1"))
	if err == nil || !strings.Contains(err.Error(), `"Slep.timeout"`) || !strings.Contains(err.Error(), `"methods.Ech.retries"`) {
		t.Errorf("two bad keys: %v, want both named", err)
	}

	ok := "Echo.timeout=100&methods.Sleep.retries=1&Sleep.loadbalance=random&connect.timeout=1s&heartbeat.interval=30s" +
		"&reconnect.backoff=200ms&session.timeout=5s&acme.timeout=3&file.cache=/tmp/x&hash.nodes=10"
	e, err := n.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+ok))
	if err != nil {
		t.Fatalf("good keys: %v", err)
	}
	_ = e.Unexport(ctxT(t))

	// A generic service that lists no methods cannot be checked.
	inv := &localInvoker{url: spi.MustParse("airnode://127.0.0.1:0/acme.Any")}
	e, err = n.ExportInvoker(ctxT(t), spi.MustParse("airnode://127.0.0.1:0/acme.Any?Slep.timeout=100"), inv)
	if err != nil {
		t.Fatalf("ExportInvoker without methods: %v", err)
	}
	_ = e.Unexport(ctxT(t))
	// One that lists them is.
	_, err = n.ExportInvoker(ctxT(t), spi.MustParse("airnode://127.0.0.1:0/acme.Any?methods=sayHello&sayHelo.timeout=100"), inv)
	if err == nil || !strings.Contains(err.Error(), `did you mean "sayHello"?`) {
		t.Errorf("ExportInvoker sayHelo.timeout: %v", err)
	}
}

// A consumer does not know the interface: its method-level key for a
// method the provider's "methods" lacks gets one warning per reference
// (naming the method meant) when the first provider arrives, and the call
// still works.
func TestReferWarnsOnceAboutMethodKeysOfNoMethod(t *testing.T) {
	reg := spi.MustParse("memory://keys6-methods")
	cat := testCatalogs(t) // one memory registry for every node
	// Two providers.
	for range 2 {
		p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0), WithRegistry(reg))
		defer p.Close()
		if _, err := p.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
			t.Fatal(err)
		}
	}
	var logs logbuf.Buffer
	c := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownWait(0), WithRegistry(reg))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?Slep.timeout=100&Echo.timeout=2s&connect.timeout=1s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(ctxT(t), "Echo", "hi"); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if strings.Count(out, "names no method of the provider") != 1 || !strings.Contains(out, `did you mean \"Sleep\"?`) ||
		strings.Contains(out, "Echo.timeout") || strings.Contains(out, `key \"connect.timeout\"`) {
		t.Errorf("want one warning about Slep.timeout only; logs:\n%s", out)
	}
}
