package extension_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
	"github.com/airnode/airnode/spi"
)

func lb(name string) spi.LoadBalanceBuilder {
	return &extensiontest.LoadBalance{Ext: extensiontest.Ext{ExtName: name}}
}

func TestRegisterStrict(t *testing.T) {
	p := extension.NewPoint[spi.LoadBalanceBuilder]("loadbalance", "loadbalance", "random")
	if err := p.Register(lb("random"), extension.Bundled); err != nil {
		t.Fatal(err)
	}
	err := p.Register(lb("random"), "/opt/plugins/random")
	if err == nil || !strings.Contains(err.Error(), `"random" already registered (bundled)`) {
		t.Fatalf("duplicate: %v", err)
	}
	for _, bad := range []string{"", "Random", "-x", ".x", "a b", "ä", "a/b", strings.Repeat("a", 65)} {
		if err := p.Register(lb(bad), extension.Bundled); err == nil {
			t.Errorf("Register(%q) succeeded", bad)
		} else if !strings.HasPrefix(err.Error(), "loadbalance: ") {
			t.Errorf("Register(%q) error %q does not name the point", bad, err)
		}
	}
	for _, good := range []string{"p2c", "acme.p2c", "my-lb_2", "9lives", strings.Repeat("a", 64)} {
		if err := p.Register(lb(good), "/plugins/x"); err != nil {
			t.Errorf("Register(%q): %v", good, err)
		}
	}
	if o, ok := p.Origin("acme.p2c"); !ok || o != "/plugins/x" {
		t.Fatalf("Origin = %q, %v", o, ok)
	}
	if !sortedStrings(p.Names()) {
		t.Fatalf("Names not sorted: %v", p.Names())
	}
}

func sortedStrings(s []string) bool {
	for i := 1; i < len(s); i++ {
		if s[i-1] > s[i] {
			return false
		}
	}
	return true
}

func TestUnknownDidYouMean(t *testing.T) {
	c := extensiontest.Catalogs()
	_, _, err := c.LoadBalance.Select(spi.MustParse("airnode://h/x?loadbalance=rundrobin"), "")
	want := `unknown loadbalance "rundrobin" (available: consistenthash, leastactive, random, roundrobin, shortestresponse); did you mean "roundrobin"?`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n got %v\nwant %s", err, want)
	}
	var ue *extension.UnknownError
	if !errors.As(err, &ue) || ue.Point != "loadbalance" || ue.Name != "rundrobin" || len(ue.Available) != 5 {
		t.Fatalf("errors.As UnknownError: %+v", ue)
	}
	// Far from everything: no suggestion.
	_, err = c.LoadBalance.Get("p2c-weighted")
	if err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Fatalf("far miss: %v", err)
	}
	// An empty point says so instead of listing nothing confusingly.
	empty := extension.New()
	if _, err := empty.Codec.Get("msgpack"); err == nil || !strings.Contains(err.Error(), `unknown codec "msgpack" (none registered)`) {
		t.Fatalf("empty point: %v", err)
	}
}

func TestChooseMethodLevelFirst(t *testing.T) {
	c := extensiontest.Catalogs()
	u := spi.MustParse("airnode://h/demo.Echo?loadbalance=roundrobin&methods.Echo.loadbalance=random&methods=Echo,Sleep,Info&Sleep.loadbalance=leastactive&Info.loadbalance=")
	tests := []struct {
		method string
		want   extension.Selection
	}{
		{"", extension.Selection{Name: "roundrobin", Source: "loadbalance"}},
		{"Echo", extension.Selection{Name: "random", Source: "methods.Echo.loadbalance"}},
		{"Sleep", extension.Selection{Name: "leastactive", Source: "Sleep.loadbalance"}},
		{"Other", extension.Selection{Name: "roundrobin", Source: "loadbalance"}},
	}
	for _, tt := range tests {
		got := c.LoadBalance.Choose(u, tt.method)
		if got != tt.want {
			t.Errorf("Choose(%q) = %+v, want %+v", tt.method, got, tt.want)
		}
		b, sel, err := c.LoadBalance.Select(u, tt.method)
		if err != nil || b.Name() != tt.want.Name || sel != tt.want {
			t.Errorf("Select(%q) = %v, %+v, %v", tt.method, b, sel, err)
		}
	}
	if got := c.LoadBalance.Choose(spi.MustParse("airnode://h/x"), "Echo"); got.Name != "random" || got.Source != "default" {
		t.Errorf("default: %+v", got)
	}
	// tester99 #1: an empty value is not absent (the default, silently):
	// Select refuses it, naming the key as written and every name
	if got := c.LoadBalance.Choose(u, "Info"); got != (extension.Selection{Name: "", Source: "Info.loadbalance"}) {
		t.Errorf("Choose(Info) = %+v, want the empty name from Info.loadbalance", got)
	}
	_, _, err := c.LoadBalance.Select(u, "Info")
	if ue, ok := errors.AsType[*extension.UnknownError](err); !ok || ue.Key != "Info.loadbalance" ||
		err.Error() != "Info.loadbalance= is empty: want one of "+strings.Join(c.LoadBalance.Names(), ", ") {
		t.Errorf("Select(Info) = %v", err)
	}
}

// tester99 #1: every point's key with an empty value is refused, as an
// unknown name is, listing the point's names, at the service level and
// per method.
func TestT99_EmptyPointKeyRefused(t *testing.T) {
	c := extensiontest.Catalogs()
	checked := 0
	for _, p := range c.Describe() {
		if p.Key == "" || p.Name == extension.PointFilter { // registry: by scheme; filter: a list, "" edits nothing
			continue
		}
		var names []string
		for _, e := range p.Extensions {
			names = append(names, e.Name)
		}
		for _, key := range []string{p.Key, "methods.Echo." + p.Key} {
			u := spi.MustParse("airnode://h:1/demo.Echo?" + key + "=")
			_, err := c.Explain(u, []string{"Echo"})
			want := key + "= is empty: want one of " + strings.Join(names, ", ")
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s=: %v, want %q", key, err, want)
			}
		}
		checked++
	}
	if checked != 5 { // transport, loadbalance, codec, heartbeat, cluster
		t.Errorf("%d points checked, want 5", checked)
	}
}

func TestChooseRegistryByScheme(t *testing.T) {
	c := extensiontest.Catalogs()
	if got := c.Registry.Choose(spi.MustParse("zookeeper://127.0.0.1:2181"), ""); got.Name != "zookeeper" || got.Source != "scheme" {
		t.Fatalf("Choose = %+v", got)
	}
	ch := c.ExplainRegistry(spi.MustParse("zookeper://127.0.0.1:2181"))
	if ch.Err == nil || !strings.Contains(ch.Err.Error(), `did you mean "zookeeper"?`) {
		t.Fatalf("ExplainRegistry typo: %+v", ch)
	}
}

func TestHeartbeatBareNumber(t *testing.T) {
	c := extensiontest.Catalogs()
	u := spi.MustParse("airnode://h/x?heartbeat=5000")
	sel := c.Heartbeat.Choose(u, "")
	if sel.Name != "idle" || sel.Source != "heartbeat" || !strings.Contains(sel.Note, "heartbeat.interval=5000") {
		t.Fatalf("Choose = %+v", sel)
	}
	n := c.Heartbeat.Normalize(u)
	if got := n.String(); got != "airnode://h/x?heartbeat=idle&heartbeat.interval=5000" {
		t.Fatalf("Normalize = %s", got)
	}
	if d, err := n.Duration("heartbeat.interval", 0); err != nil || d.Milliseconds() != 5000 {
		t.Fatalf("interval = %v, %v", d, err)
	}
	// A name is left alone, and so is every other point.
	if got := c.Heartbeat.Choose(spi.MustParse("a://h/x?heartbeat=dual"), ""); got.Name != "dual" || got.Note != "" {
		t.Fatalf("named: %+v", got)
	}
	if got := c.LoadBalance.Choose(spi.MustParse("a://h/x?loadbalance=5"), ""); got.Name != "5" {
		t.Fatalf("loadbalance=5 chose %+v", got)
	}
	if _, _, err := c.Heartbeat.Select(u, ""); err != nil {
		t.Fatal(err)
	}
}

// countingLB is a wrapper recording the name it wrapped.
type countingLB struct {
	spi.LoadBalanceBuilder
	tag string
}

func (c countingLB) Name() string { return c.LoadBalanceBuilder.Name() + "+" + c.tag }

func TestWrappers(t *testing.T) {
	c := extensiontest.Catalogs()
	c.LoadBalance.Wrap(func(b spi.LoadBalanceBuilder) spi.LoadBalanceBuilder { return countingLB{b, "metrics"} })
	c.LoadBalance.Wrap(func(b spi.LoadBalanceBuilder) spi.LoadBalanceBuilder { return countingLB{b, "trace"} })
	for _, n := range c.LoadBalance.Names() {
		b, err := c.LoadBalance.Get(n)
		if err != nil || b.Name() != n+"+metrics+trace" {
			t.Fatalf("Get(%s) = %v, %v; want wrapped twice in order", n, b, err)
		}
	}
	b, _, err := c.LoadBalance.Select(spi.MustParse("a://h/x"), "")
	if err != nil || b.Name() != "random+metrics+trace" {
		t.Fatalf("Select = %v, %v", b, err)
	}
	// Names are the registered ones, not the wrapped ones.
	if _, ok := c.LoadBalance.Origin("random"); !ok {
		t.Fatal("origin lost by wrapping")
	}
}

func TestActivateFilters(t *testing.T) {
	c := extensiontest.Catalogs()
	tests := []struct {
		name   string
		url    string
		side   spi.Side
		method string
		want   []string
		err    string
	}{
		{"consumer activated", "a://h/x", spi.Consumer, "", []string{"metrics"}, ""},
		{"provider activated by order then key", "a://h/x?token=s&accesslog=true&executes=5", spi.Provider, "", []string{"metrics", "token", "accesslog", "executelimit"}, ""},
		{"key absent: not activated", "a://h/x", spi.Provider, "", []string{"metrics"}, ""},
		{"named filters appended", "a://h/x?filter=accesslog,token", spi.Consumer, "", []string{"metrics", "accesslog", "token"}, ""},
		{"default marks the position", "a://h/x?filter=accesslog,default,token", spi.Consumer, "", []string{"accesslog", "metrics", "token"}, ""},
		{"-name removes", "a://h/x?token=s&filter=-metrics", spi.Provider, "", []string{"token"}, ""},
		{"-default removes the activated set", "a://h/x?token=s&filter=-default,accesslog", spi.Provider, "", []string{"accesslog"}, ""},
		{"listed activated filter moves to its place", "a://h/x?token=s&filter=token,default", spi.Provider, "", []string{"token", "metrics"}, ""},
		{"-name beats listing", "a://h/x?filter=accesslog,-accesslog", spi.Consumer, "", []string{"metrics"}, ""},
		{"duplicates once, spaces and blanks ignored", "a://h/x?filter=accesslog,+,accesslog,,token", spi.Consumer, "", []string{"metrics", "accesslog", "token"}, ""},
		{"method-level filter list", "a://h/x?filter=accesslog&methods.Echo.filter=-default", spi.Consumer, "Echo", nil, ""},
		{"method-level activation key", "a://h/x?methods.Echo.actives=3", spi.Consumer, "Echo", []string{"metrics", "activelimit"}, ""},
		{"method-level key not for others", "a://h/x?methods.Echo.actives=3", spi.Consumer, "Sleep", []string{"metrics"}, ""},
		// tester8: Dubbo users set limits per method; the chain is built
		// once for the service, so a PerMethod key set for any method
		// activates the filter there, and the filter reads each method's value.
		{"per-method key activates the service chain", "a://h/x?methods.Sleep.executes=1", spi.Provider, "", []string{"metrics", "executelimit"}, ""},
		{"Dubbo's per-method form too", "a://h/x?Sleep.actives=1", spi.Consumer, "", []string{"metrics", "activelimit"}, ""},
		{"Dubbo's form for a method not listed", "a://h/x?methods=Echo&Sleep.executes=1", spi.Provider, "", []string{"metrics"}, ""},
		{"a dotted name is no method", "a://h/x?methods.Sleep.x.executes=1&a.b.executes=1", spi.Provider, "", []string{"metrics"}, ""},
		{"not for filters without PerMethod", "a://h/x?Echo.token=s", spi.Provider, "", []string{"metrics"}, ""},
		{"unknown name", "a://h/x?filter=acesslog", spi.Consumer, "", nil, `unknown filter "acesslog" (available: accesslog, activelimit, executelimit, metrics, token); did you mean "accesslog"?`},
		{"unknown removal", "a://h/x?filter=-tokn", spi.Consumer, "", nil, `unknown filter "tokn"`},
		{"bare dash", "a://h/x?filter=-", spi.Consumer, "", nil, `empty name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain, err := extension.ActivateFilters(c.Filter, spi.MustParse(tt.url), tt.side, tt.method)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range chain {
				names = append(names, f.Name())
			}
			if !reflect.DeepEqual(names, tt.want) {
				t.Fatalf("chain %v, want %v", names, tt.want)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	c := extensiontest.Catalogs()
	u := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?loadbalance=roundrobin&methods.Echo.loadbalance=random&heartbeat=5000&token=s&methods.Echo.filter=-metrics")
	methods := extension.ReferencedMethods(u)
	if !reflect.DeepEqual(methods, []string{"Echo"}) {
		t.Fatalf("ReferencedMethods = %v", methods)
	}
	e, err := c.Explain(u, methods)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]extension.Choice{}
	for _, ch := range e.Points {
		got[ch.Point+"/"+ch.Method] = ch
	}
	check := func(k, name, source string) {
		t.Helper()
		ch, ok := got[k]
		if !ok || ch.Name != name || ch.Source != source || ch.Origin != extension.Bundled || ch.Err != nil {
			t.Errorf("%s = %+v, want %s from %s", k, ch, name, source)
		}
	}
	check("loadbalance/", "roundrobin", "loadbalance")
	check("loadbalance/Echo", "random", "methods.Echo.loadbalance")
	check("transport/", "smux", "default")
	check("codec/Echo", "msgpack", "default")
	check("cluster/", "failover", "default")
	check("heartbeat/", "idle", "heartbeat")
	if len(e.Points) != 10 {
		t.Errorf("%d choices, want 5 points x 2 scopes", len(e.Points))
	}
	wantFilters := []extension.FilterChoice{
		{Side: spi.Consumer, Names: []string{"metrics"}, Source: "activated"},
		{Side: spi.Consumer, Method: "Echo", Source: "methods.Echo.filter"},
		{Side: spi.Provider, Names: []string{"metrics", "token"}, Source: "activated"},
		{Side: spi.Provider, Method: "Echo", Names: []string{"token"}, Source: "methods.Echo.filter"},
	}
	if !reflect.DeepEqual(e.Filters, wantFilters) {
		t.Fatalf("filters\n got %+v\nwant %+v", e.Filters, wantFilters)
	}

	// Unknown names and Build errors are reported, each once.
	bad := spi.MustParse("airnode://h/x?loadbalance=rundrobin&warmup=soon&heartbeat.interval=abc&methods=A,B")
	e, err = c.Explain(bad, extension.ReferencedMethods(bad))
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{`unknown loadbalance "rundrobin"`, `heartbeat "idle": invalid value "abc" for URL key "heartbeat.interval"`} {
		if strings.Count(msg, want) != 1 {
			t.Errorf("error %q should contain %q once", msg, want)
		}
	}
	if e == nil || len(e.Points) != 15 {
		t.Fatalf("explanation not returned with the error: %+v", e)
	}
	// warmup belongs to the balancer stand-ins; with the balancer unknown it
	// is not built, but a known balancer is.
	_, err = c.Explain(spi.MustParse("airnode://h/x?warmup=soon"), nil)
	if err == nil || !strings.Contains(err.Error(), `loadbalance "random": invalid value "soon" for URL key "warmup"`) {
		t.Fatalf("build error: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	c := extensiontest.Catalogs()
	if err := c.LoadBalance.Register(lb("acme.p2c"), "/opt/airnode/plugins/p2c"); err != nil {
		t.Fatal(err)
	}
	d := c.Describe()
	var points []string
	for _, p := range d {
		points = append(points, p.Name)
	}
	want := []string{"cluster", "codec", "filter", "heartbeat", "loadbalance", "registry", "transport"}
	if !reflect.DeepEqual(points, want) {
		t.Fatalf("points %v, want %v", points, want)
	}
	for _, p := range d {
		if p.Name != "loadbalance" {
			continue
		}
		if p.Key != "loadbalance" || p.Default != "random" || !reflect.DeepEqual(p.Extensions[0], extension.ExtensionInfo{Name: "acme.p2c", Origin: "/opt/airnode/plugins/p2c"}) {
			t.Fatalf("loadbalance info %+v", p)
		}
	}
}

func TestCodecByID(t *testing.T) {
	c := extensiontest.Catalogs()
	if cd, err := c.CodecByID(2); err != nil || cd.Name() != "json" {
		t.Fatalf("CodecByID(2) = %v, %v", cd, err)
	}
	if _, err := c.CodecByID(30); err == nil {
		t.Fatal("CodecByID(30) succeeded")
	}
}

// sideFilter is a filter that, like the bundled metrics filter, refuses a
// URL without side=consumer or side=provider (the kernel sets it).
type sideFilter struct{ extensiontest.Filter }

func (f *sideFilter) Build(u spi.URL) (spi.Filter, error) {
	switch side, _ := u.Param(spi.KeySide); side {
	case string(spi.Consumer), string(spi.Provider):
		return f.Filter.Build(u)
	default:
		return nil, fmt.Errorf("sidefilter: URL key \"side\" is %q", side)
	}
}

// Explain builds each side's filters with that side's "side" key, as the
// kernel does, so a URL without side= explains without errors.
func TestExplainBuildsFiltersWithSide(t *testing.T) {
	c := extensiontest.Catalogs()
	act := spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}}
	if err := c.Filter.Register(&sideFilter{extensiontest.Filter{Ext: extensiontest.Ext{ExtName: "sidefilter", Act: act}}}, extension.Bundled); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"airnode://h/demo.Echo?loadbalance=roundrobin", "airnode://h/demo.Echo?side=consumer", "airnode://h/demo.Echo?side=provider"} {
		u := spi.MustParse(raw)
		if _, err := c.Explain(u, extension.ReferencedMethods(u)); err != nil {
			t.Errorf("Explain(%s): %v", raw, err)
		}
	}
}
