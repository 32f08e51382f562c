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

// A direct reference learns no method list from its provider: at Refer it
// warns once of each method-level key naming a method no Go service can
// have (sleep.timeout, a Java spelling: did you mean "Sleep"?), in the
// words of the registry path's warning, and says at info level which keys
// it cannot check (Nope.timeout). The key stays ignored: Sleep 400 is not
// cut at 100 ms (tester28 finding 1).
func TestHKeysDirectReferWarnsOfMethodKeysOfNoMethod(t *testing.T) {
	cat := testCatalogs(t)
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	exp, err := p.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	c := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))), WithShutdownWait(0))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+exp.URL().Address()+"/demo.Echo?sleep.timeout=100&methods.echo.retries=1&Nope.timeout=300&Echo.timeout=2s&connect.timeout=1s&default.timeout=5s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range 3 {
		if _, err := r.Invoke(ctxT(t), "Sleep", 400); err != nil {
			t.Fatalf("Sleep 400 with sleep.timeout=100 (ignored): %v", err)
		}
	}
	if d := time.Since(start); d < 1200*time.Millisecond {
		t.Errorf("3 × Sleep 400 took %v: sleep.timeout=100 was applied", d)
	}
	out := logs.String()
	warn := "names no method of the provider (ignored)"
	if n := strings.Count(out, warn); n != 2 {
		t.Errorf("%d warnings %q, want 2 (sleep.timeout, methods.echo.retries); logs:\n%s", n, warn, out)
	}
	for _, want := range []string{
		`URL key \"sleep.timeout\" sets timeout for method sleep, but service demo.Echo has no method sleep: a service's methods are exported Go names (upper-case first letter); did you mean \"Sleep\"?`,
		`URL key \"methods.echo.retries\" sets retries for method echo, but service demo.Echo has no method echo`,
		`did you mean \"Echo\"?`,
		"level=INFO msg=\"method-level URL keys not checked against the provider's methods: a direct reference does not learn them; list them in the URL (methods=A,B) to have each key checked\" component=kernel service=demo.Echo keys=Echo.timeout,Nope.timeout",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %s:\n%s", want, out)
		}
	}
	for _, not := range []string{`key \"connect.timeout\"`, `key \"default.timeout\"`, `key \"Echo.timeout\"`} {
		if strings.Contains(out, not) {
			t.Errorf("logs warn of %s:\n%s", not, out)
		}
	}

	// With methods= in the direct URL, every key is checked against it,
	// once, naming the list and the method meant.
	before := len(logs.String())
	r2, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+exp.URL().Address()+"/demo.Echo?methods=Echo,Sleep&sleep.timeout=100&Nope.timeout=300&Echo.timeout=2s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := r2.Invoke(ctxT(t), "Echo", "hi"); err != nil {
			t.Fatal(err)
		}
	}
	out = logs.String()[before:]
	if n := strings.Count(out, warn); n != 2 {
		t.Errorf("methods=Echo,Sleep: %d warnings, want 2 (sleep.timeout, Nope.timeout); logs:\n%s", n, out)
	}
	for _, want := range []string{
		`URL key \"sleep.timeout\" sets timeout for method sleep, but service demo.Echo has no method sleep (methods: Echo, Sleep); did you mean \"Sleep\"?`,
		`URL key \"Nope.timeout\" sets timeout for method Nope, but service demo.Echo has no method Nope (methods: Echo, Sleep)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("methods=Echo,Sleep: logs lack %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not checked") {
		t.Errorf("methods=Echo,Sleep: says keys are not checked:\n%s", out)
	}
}

// Through a registry the same lower-case key gets the same did-you-mean
// from the provider's "methods", also for a name more than two edits
// from the method but the same apart from case (gethttpstatus for
// GetHTTPStatus), which was passed silently before.
func TestHKeysRegistryReferWarnsOfCaseOnlyMethodKey(t *testing.T) {
	reg := spi.MustParse("memory://hkeys-case")
	cat := testCatalogs(t)
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0), WithRegistry(reg))
	defer p.Close()
	if _, err := p.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	c := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownWait(0), WithRegistry(reg))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?sleep.timeout=100"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Invoke(ctxT(t), "Echo", "hi"); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if strings.Count(out, "names no method of the provider (ignored)") != 1 ||
		!strings.Contains(out, `has no method sleep (methods: Echo, Fail, Info, Payload, Sleep); did you mean \"Sleep\"?`) {
		t.Errorf("want one warning naming Sleep; logs:\n%s", out)
	}

	err = c.CheckMethodKeys(spi.MustParse("airnode:///acme.Web?gethttpstatus.timeout=1&sayhello.retries=2"), []string{"GetHTTPStatus", "SayHello"})
	for _, want := range []string{`has no method gethttpstatus (methods: GetHTTPStatus, SayHello); did you mean "GetHTTPStatus"?`, `did you mean "SayHello"?`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckMethodKeys = %v, want %s", err, want)
		}
	}
}

// NewNode refuses catalogs it could only panic on later, with a message
// naming what is missing and what to pass (tester28 finding 3).
func TestHKeysNewNodeNamesMissingCatalogs(t *testing.T) {
	panicOf := func(cat *extension.Catalogs) (msg string) {
		defer func() {
			if v := recover(); v != nil {
				if err, ok := v.(error); ok {
					msg = err.Error()
				}
			}
		}()
		NewNode(cat)
		return ""
	}
	for name, tc := range map[string]struct {
		cat  *extension.Catalogs
		want string
	}{
		"nil":  {nil, "kernel.NewNode: catalogs is nil: use bundle.Catalogs() (every bundled extension) or extension.New() with the extensions registered in it"},
		"zero": {&extension.Catalogs{}, "kernel.NewNode: catalogs has no Transport, Registry, LoadBalance, Codec, Heartbeat, Cluster, Filter catalog (an extension.Catalogs not made by extension.New): use bundle.Catalogs()"},
		"part": {&extension.Catalogs{Transport: extension.New().Transport}, "catalogs has no Registry, LoadBalance,"},
	} {
		if got := panicOf(tc.cat); !strings.Contains(got, tc.want) {
			t.Errorf("%s: NewNode panics with %q, want %q", name, got, tc.want)
		}
	}
	if got := panicOf(extension.New()); got != "" {
		t.Errorf("NewNode(extension.New()) panics: %s", got)
	}
	if got := panicOf(testCatalogs(t)); got != "" {
		t.Errorf("NewNode(testCatalogs) panics: %s", got)
	}
}
