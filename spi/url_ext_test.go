package spi_test

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// TestU1_IPv6Brackets: "airnode://[::1]:20880/demo.Echo" has host ::1 and
// port 20880; an unbracketed IPv6 address with a port is an error.
func TestU1_IPv6Brackets(t *testing.T) {
	u, err := spi.Parse("airnode://[::1]:20880/demo.Echo")
	if err != nil {
		t.Fatal(err)
	}
	if u.Host() != "::1" || u.Port() != 20880 || u.Path() != "demo.Echo" {
		t.Fatalf("host %q port %d path %q, want ::1 20880 demo.Echo", u.Host(), u.Port(), u.Path())
	}
	if got := u.Address(); got != "[::1]:20880" {
		t.Fatalf("Address() = %q, want [::1]:20880", got)
	}
	if got := u.String(); got != "airnode://[::1]:20880/demo.Echo" {
		t.Fatalf("String() = %q", got)
	}
	for _, bad := range []string{
		"airnode://::1:20880/x",
		"airnode://fe80::1:20880/x",
		"airnode://[::1/x",      // missing ]
		"airnode://[::1]x/x",    // junk after ]
		"airnode://[::1]:/x",    // empty port
		"airnode://[host]:1/x",  // brackets around a non-IPv6 host
		"airnode://[::1]:99999", // port out of range
	} {
		if _, err := spi.Parse(bad); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", bad)
		}
	}
	_, err = spi.Parse("airnode://::1:20880/x")
	if err == nil || !strings.Contains(err.Error(), "brackets") {
		t.Fatalf("unbracketed IPv6 error %v, want one that asks for brackets", err)
	}
}

// TestU2_EmptyValueKept: "?token=" is present with an empty value, not
// token=token; a bare "token" is the same.
func TestU2_EmptyValueKept(t *testing.T) {
	for _, s := range []string{"airnode://h/x?token=", "airnode://h/x?token"} {
		u := spi.MustParse(s)
		v, ok := u.Param("token")
		if !ok || v != "" {
			t.Fatalf("%s: Param(token) = %q, %v; want \"\", true", s, v, ok)
		}
		if got := u.String(); got != "airnode://h/x?token=" {
			t.Fatalf("%s: String() = %q, want airnode://h/x?token=", s, got)
		}
		if got := u.ParamOr("token", "dflt"); got != "" {
			t.Fatalf("%s: ParamOr = %q, want empty (present beats default)", s, got)
		}
	}
}

// TestU3_MethodLevelExactPrefix: "sayHello.timeout=200&timeout=1000" gives
// sayHello 200ms and say 1000ms.
func TestU3_MethodLevelExactPrefix(t *testing.T) {
	for _, raw := range []string{
		"airnode://h/demo.Greeter?methods=say,sayHello&sayHello.timeout=200&timeout=1000",
		"airnode://h/demo.Greeter?sayHello.timeout=200&timeout=1000", // the case as written: no methods=
	} {
		testU3(t, spi.MustParse(raw))
	}
	// methods= that does not list the method: the Dubbo-style key is not its.
	u := spi.MustParse("airnode://h/demo.Greeter?methods=say&sayHello.timeout=200&timeout=1000")
	if d, _ := u.MethodDuration("sayHello", "timeout", 0); d != time.Second {
		t.Errorf("sayHello not in methods=say: %v, want 1s", d)
	}
}

func testU3(t *testing.T, u spi.URL) {
	t.Helper()
	for _, c := range []struct {
		method string
		want   time.Duration
		src    string
	}{
		{"sayHello", 200 * time.Millisecond, "sayHello.timeout"},
		{"say", time.Second, "timeout"},
		{"", time.Second, "timeout"},
		{"sayHell", time.Second, "timeout"},
	} {
		d, err := u.MethodDuration(c.method, "timeout", 5*time.Second)
		if err != nil || d != c.want {
			t.Errorf("MethodDuration(%q) = %v, %v; want %v", c.method, d, err, c.want)
		}
		if _, src, _ := u.MethodParam(c.method, "timeout"); src != c.src {
			t.Errorf("MethodParam(%q) source %q, want %q", c.method, src, c.src)
		}
	}
}

func TestURLMethodParams(t *testing.T) {
	tests := []struct {
		name, url, method, want, src string
	}{
		{"methods. prefix wins", "a://h/x?methods.Echo.timeout=5&Echo.timeout=6&timeout=7&methods=Echo", "Echo", "5", "methods.Echo.timeout"},
		{"methods. prefix needs no methods list", "a://h/x?methods.Echo.timeout=5&timeout=7", "Echo", "5", "methods.Echo.timeout"},
		{"dubbo form without a methods list", "a://h/x?Echo.timeout=6&timeout=7", "Echo", "6", "Echo.timeout"},
		{"dubbo form needs the method listed when there is a list", "a://h/x?Echo.timeout=6&timeout=7&methods=Sleep", "Echo", "7", "timeout"},
		{"dubbo form with method listed", "a://h/x?Echo.timeout=6&timeout=7&methods=Sleep,Echo", "Echo", "6", "Echo.timeout"},
		{"other method untouched", "a://h/x?methods.Echo.timeout=5&timeout=7", "Sleep", "7", "timeout"},
		{"prefix is exact", "a://h/x?methods.EchoX.timeout=5&timeout=7", "Echo", "7", "timeout"},
		{"service level ignores method keys", "a://h/x?methods.Echo.timeout=5", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, src, ok := spi.MustParse(tt.url).MethodParam(tt.method, "timeout")
			if v != tt.want || src != tt.src || ok != (tt.src != "") {
				t.Fatalf("MethodParam = %q, %q, %v; want %q, %q", v, src, ok, tt.want, tt.src)
			}
		})
	}
}

func TestURLParse(t *testing.T) {
	tests := []struct {
		in       string
		scheme   string
		user     string
		password string
		hosts    []spi.HostPort
		path     string
		params   map[string]string
		canon    string // String(); "" means same as in
	}{
		{in: "airnode://127.0.0.1:20880/demo.Echo", scheme: "airnode",
			hosts: []spi.HostPort{{Host: "127.0.0.1", Port: 20880}}, path: "demo.Echo", params: map[string]string{}},
		{in: "zookeeper://u:p%40ss@zk1:2181,zk2:2182,[::1]:2183/airnode?backup=zk3:2184",
			scheme: "zookeeper", user: "u", password: "p@ss",
			hosts: []spi.HostPort{{Host: "zk1", Port: 2181}, {Host: "zk2", Port: 2182}, {Host: "::1", Port: 2183}},
			path:  "airnode", params: map[string]string{"backup": "zk3:2184"},
			canon: "zookeeper://u:p%40ss@zk1:2181,zk2:2182,[::1]:2183/airnode?backup=zk3%3A2184"},
		{in: "file:///tmp/reg", scheme: "file", hosts: []spi.HostPort{{}}, path: "tmp/reg", params: map[string]string{}},
		{in: "memory://", scheme: "memory", hosts: []spi.HostPort{{}}, params: map[string]string{}},
		{in: "airnode://h/x?b=2&a=1&c=", scheme: "airnode", hosts: []spi.HostPort{{Host: "h"}}, path: "x",
			params: map[string]string{"a": "1", "b": "2", "c": ""}, canon: "airnode://h/x?a=1&b=2&c="},
		{in: "airnode://h/x?&&a=1&", scheme: "airnode", hosts: []spi.HostPort{{Host: "h"}}, path: "x",
			params: map[string]string{"a": "1"}, canon: "airnode://h/x?a=1"},
		{in: "airnode://h/a%20b/c?k=v%26w%3Dx&sp=a+b", scheme: "airnode", hosts: []spi.HostPort{{Host: "h"}}, path: "a b/c",
			params: map[string]string{"k": "v&w=x", "sp": "a b"}, canon: "airnode://h/a%20b/c?k=v%26w%3Dx&sp=a+b"},
		{in: "airnode://h/x?v=%2525", scheme: "airnode", hosts: []spi.HostPort{{Host: "h"}}, path: "x",
			params: map[string]string{"v": "%25"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			u, err := spi.Parse(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if u.Scheme() != tt.scheme || u.User() != tt.user || u.Password() != tt.password || u.Path() != tt.path {
				t.Fatalf("got scheme %q user %q password %q path %q", u.Scheme(), u.User(), u.Password(), u.Path())
			}
			if !reflect.DeepEqual(u.Hosts(), tt.hosts) {
				t.Fatalf("hosts %v, want %v", u.Hosts(), tt.hosts)
			}
			if !reflect.DeepEqual(u.Params(), tt.params) {
				t.Fatalf("params %v, want %v", u.Params(), tt.params)
			}
			canon := tt.canon
			if canon == "" {
				canon = tt.in
			}
			if got := u.String(); got != canon {
				t.Fatalf("String() = %q, want %q", got, canon)
			}
			back, err := spi.Parse(u.String())
			if err != nil || !back.Equal(u) {
				t.Fatalf("Parse(String()) = %v, %v; want %v", back, err, u)
			}
		})
	}
}

func TestURLParseErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"127.0.0.1:20880", "no scheme"},
		{"://h/x", "empty scheme"},
		{"1ab://h/x", "invalid scheme"},
		{"a://h:x/y", "invalid port"},
		{"a://h:65536/y", "invalid port"},
		{"a://h:+80/y", "invalid port"},
		{"a://h1:1,,h2:2/y", "empty host"},
		{"a://h/x?timeout=1&timeout=2", `"timeout" given twice`},
		{"a://h/x?=1", "empty parameter key"},
		{"a://h/x?a=%zz", `value of "a"`},
		{"a://h/x?%zz=1", "parameter key"},
		{"a://h/%zz", "bad path"},
		{"a://:p@h/x", "empty user"},
		{"a://h h/x", "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := spi.Parse(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse(%q) error %v, want one containing %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestURLPercentEncodingOnce(t *testing.T) {
	u := spi.MustParse("airnode://h/x").With("k", "%").With("sp ace", "a b&c=d/é")
	s := u.String()
	if strings.Contains(s, "%2525") {
		t.Fatalf("double-encoded: %s", s)
	}
	if want := "airnode://h/x?k=%25&sp+ace=a+b%26c%3Dd%2F%C3%A9"; s != want {
		t.Fatalf("String() = %q, want %q", s, want)
	}
	for i := 0; i < 3; i++ { // round-trips stay stable
		back := spi.MustParse(s)
		if !back.Equal(u) || back.String() != s {
			t.Fatalf("round trip %d: %q -> %q", i, s, back.String())
		}
		s = back.String()
	}
	// A registry node name is the percent-encoded String; decoding it once
	// gives the URL back.
	if v, _ := spi.MustParse(s).Param("k"); v != "%" {
		t.Fatalf("k = %q, want %%", v)
	}
}

func TestURLAddresses(t *testing.T) {
	u := spi.MustParse("zookeeper://zk1:2181,[::1]:2182/x?backup=zk3:2183,zk1:2181,[fe80::1]:2184")
	want := []string{"zk1:2181", "[::1]:2182", "zk3:2183", "[fe80::1]:2184"}
	if got := u.Addresses(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Addresses() = %v, want %v", got, want)
	}
	split := u.SplitHosts()
	if len(split) != 2 || split[1].Address() != "[::1]:2182" || split[1].Path() != "x" {
		t.Fatalf("SplitHosts() = %v", split)
	}
}

// RepeatedAddresses names each address listed more than once, in the
// authority and the backup parameter together, once, in the order of its
// first listing.
func TestURLRepeatedAddresses(t *testing.T) {
	u := spi.MustParse("zookeeper://zk1:2181,[::1]:2182,zk1:2181,zk1:2181/x?backup=zk3:2183,[::1]:2182,zk4:1")
	if got, want := u.RepeatedAddresses(), []string{"zk1:2181", "[::1]:2182"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("RepeatedAddresses() = %v, want %v", got, want)
	}
	if got := spi.MustParse("airnode://h1:1,h2:1/x?backup=h3:1").RepeatedAddresses(); got != nil {
		t.Fatalf("RepeatedAddresses() = %v, want nil", got)
	}
}

func TestURLServiceKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"airnode://h/demo.Echo", "demo.Echo"},
		{"airnode://h/demo.Echo?group=g", "g/demo.Echo"},
		{"airnode://h/demo.Echo?version=1.0", "demo.Echo:1.0"},
		{"airnode://h/demo.Echo?group=g&version=1.0", "g/demo.Echo:1.0"},
		{"airnode://h/p?interface=demo.Echo&group=g&version=2", "g/demo.Echo:2"},
	}
	for _, tt := range tests {
		if got := spi.MustParse(tt.in).ServiceKey(); got != tt.want {
			t.Errorf("ServiceKey(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestURLWithReturnsCopy(t *testing.T) {
	orig := spi.MustParse("airnode://h:1/x?a=1")
	before := orig.String()
	w := orig.With("a", "2").With("b", "3")
	_ = orig.WithParams(map[string]string{"a": "9"})
	_ = orig.Without("a")
	_ = orig.WithAddress("other", 2)
	_ = orig.WithPath("/y")
	_ = orig.WithScheme("z")
	if orig.String() != before {
		t.Fatalf("original changed: %s -> %s", before, orig.String())
	}
	if w.String() != "airnode://h:1/x?a=2&b=3" {
		t.Fatalf("With: %s", w)
	}
	p := orig.Params()
	p["a"] = "mutated"
	hs := orig.Hosts()
	hs[0].Host = "mutated"
	if orig.String() != before {
		t.Fatalf("Params/Hosts copies alias the URL: %s", orig)
	}
	if got := orig.Without("a").String(); got != "airnode://h:1/x" {
		t.Fatalf("Without: %s", got)
	}
}

func TestURLTypedGetters(t *testing.T) {
	u := spi.MustParse("a://h/x?timeout=abc&ms=3000&go=1.5s&neg=-1s&n=42&bad=4x2&t=true&f=0&bb=yes&sz=8MiB&szb=12&szbad=8 parsecs&empty=")
	var pe *spi.ParamError

	// absent -> default
	if d, err := u.Duration("absent", 7*time.Second); d != 7*time.Second || err != nil {
		t.Fatalf("absent duration = %v, %v", d, err)
	}
	if n, err := u.Int("absent", 5); n != 5 || err != nil {
		t.Fatalf("absent int = %v, %v", n, err)
	}
	if b, err := u.Bool("absent", true); !b || err != nil {
		t.Fatalf("absent bool = %v, %v", b, err)
	}
	if s, err := u.Size("absent", 9); s != 9 || err != nil {
		t.Fatalf("absent size = %v, %v", s, err)
	}

	// well-formed
	for key, want := range map[string]time.Duration{"ms": 3 * time.Second, "go": 1500 * time.Millisecond} {
		if d, err := u.Duration(key, 0); d != want || err != nil {
			t.Errorf("Duration(%s) = %v, %v; want %v", key, d, err, want)
		}
	}
	if n, _ := u.Int("n", 0); n != 42 {
		t.Errorf("Int(n) = %d", n)
	}
	if b, _ := u.Bool("t", false); !b {
		t.Errorf("Bool(t) = false")
	}
	if b, _ := u.Bool("f", true); b {
		t.Errorf("Bool(f) = true")
	}
	if s, _ := u.Size("sz", 0); s != 8<<20 {
		t.Errorf("Size(sz) = %d", s)
	}
	if s, _ := u.Size("szb", 0); s != 12 {
		t.Errorf("Size(szb) = %d", s)
	}

	// malformed -> *ParamError naming key and value, never a silent default
	checks := []struct {
		key, value string
		get        func() error
	}{
		{"timeout", "abc", func() error { _, err := u.Duration("timeout", time.Second); return err }},
		{"neg", "-1s", func() error { _, err := u.Duration("neg", time.Second); return err }},
		{"empty", "", func() error { _, err := u.Duration("empty", time.Second); return err }},
		{"bad", "4x2", func() error { _, err := u.Int("bad", 1); return err }},
		{"bb", "yes", func() error { _, err := u.Bool("bb", false); return err }},
		{"szbad", "8 parsecs", func() error { _, err := u.Size("szbad", 1); return err }},
	}
	for _, c := range checks {
		err := c.get()
		if !errors.As(err, &pe) || pe.Key != c.key || pe.Value != c.value {
			t.Errorf("%s=%q: error %v, want *ParamError naming both", c.key, c.value, err)
			continue
		}
		if !strings.Contains(err.Error(), c.key) || !strings.Contains(err.Error(), `"`+c.value+`"`) {
			t.Errorf("message %q does not name key %q and value %q", err, c.key, c.value)
		}
	}

	// timeout=abc never becomes 1s: the error is what the caller acts on.
	if _, err := u.MethodDuration("Echo", "timeout", time.Second); err == nil {
		t.Fatal("timeout=abc accepted")
	}
	// A method-level malformed value names the method-level key.
	m := spi.MustParse("a://h/x?methods.Echo.timeout=zz&timeout=1s")
	if _, err := m.MethodDuration("Echo", "timeout", 0); !errors.As(err, &pe) || pe.Key != "methods.Echo.timeout" {
		t.Fatalf("method-level error %v, want key methods.Echo.timeout", err)
	}
}

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{
		"3000": 3 * time.Second, "0": 0, "1.5s": 1500 * time.Millisecond, "200ms": 200 * time.Millisecond,
		"1m30s": 90 * time.Second, " 10s ": 10 * time.Second,
	}
	for in, want := range good {
		if d, err := spi.ParseDuration(in); err != nil || d != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, d, err, want)
		}
	}
	for _, in := range []string{"", "abc", "-5", "-1s", "10 seconds", "1.5", "99999999999999999999"} {
		if d, err := spi.ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", in, d)
		}
	}
}

func TestNewURL(t *testing.T) {
	u, err := spi.NewURL("airnode", "::1", 20880, "/demo.Echo", map[string]string{"b": "2", "a": ""})
	if err != nil {
		t.Fatal(err)
	}
	if got := u.String(); got != "airnode://[::1]:20880/demo.Echo?a=&b=2" {
		t.Fatalf("String() = %q", got)
	}
	if !spi.MustParse(u.String()).Equal(u) {
		t.Fatal("NewURL does not round-trip")
	}
	for _, bad := range []struct {
		scheme, host string
		port         int
		params       map[string]string
	}{
		{"", "h", 1, nil},
		{"a", "h h", 1, nil},
		{"a", "h", 70000, nil},
		{"a", "h", 1, map[string]string{"": "x"}},
	} {
		if _, err := spi.NewURL(bad.scheme, bad.host, bad.port, "x", bad.params); err == nil {
			t.Errorf("NewURL(%+v) succeeded", bad)
		}
	}
}

func TestMergeURL(t *testing.T) {
	provider := spi.MustParse("airnode://10.0.0.1:20880/demo.Echo?timestamp=100&weight=200&warmup=5m&methods=Echo,Sleep&group=g&version=1&token=secret&timeout=3s&filter=token&codec=json")
	consumer := spi.MustParse("consumer://10.0.0.9/demo.Echo?timestamp=999&weight=1&warmup=1s&methods=X&group=other&version=9&token=guess&timeout=500ms&filter=metrics,-accesslog&loadbalance=roundrobin&check=false")
	m := spi.MergeURL(provider, consumer)

	if m.Scheme() != "airnode" || m.Address() != "10.0.0.1:20880" || m.Path() != "demo.Echo" {
		t.Fatalf("merged base is not the provider's: %s", m)
	}
	want := map[string]string{
		// provider-owned keys stay the provider's
		"timestamp": "100", "weight": "200", "warmup": "5m", "methods": "Echo,Sleep",
		"group": "g", "version": "1", "token": "secret",
		// consumer wins elsewhere
		"timeout": "500ms", "loadbalance": "roundrobin", "check": "false",
		// provider's keys the consumer did not set survive
		"codec": "json",
		// filters concatenated, provider's first
		"filter": "token,metrics,-accesslog",
	}
	if got := m.Params(); !reflect.DeepEqual(got, want) {
		t.Fatalf("merged params\n got %v\nwant %v", got, want)
	}

	// A provider-owned key the provider lacks is not taken from the consumer.
	m = spi.MergeURL(spi.MustParse("airnode://p:1/x"), spi.MustParse("c://c/x?weight=5&token=t&filter=a"))
	if _, ok := m.Param("weight"); ok {
		t.Fatalf("consumer weight leaked: %s", m)
	}
	if _, ok := m.Param("token"); ok {
		t.Fatalf("consumer token leaked: %s", m)
	}
	if f, _ := m.Param("filter"); f != "a" {
		t.Fatalf("consumer-only filter = %q, want a", f)
	}
	// Inputs untouched.
	if provider.String() != spi.MustParse(provider.String()).String() || !strings.Contains(consumer.String(), "timestamp=999") {
		t.Fatal("MergeURL modified its inputs")
	}
}

// A direct URL is both the provider's URL and the consumer's: merging it
// with itself keeps its filter list once (list --explain showed
// filter=accesslog,accesslog).
func TestMergeURLSameFilterListOnce(t *testing.T) {
	u := spi.MustParse("airnode://127.0.0.1:1/demo.Echo?filter=accesslog,-metrics")
	if got, _ := spi.MergeURL(u, u).Param(spi.KeyFilter); got != "accesslog,-metrics" {
		t.Fatalf("filter after merging a URL with itself = %q, want %q", got, "accesslog,-metrics")
	}
}

// A method-level key is one key in either spelling: the consumer's value
// wins over the provider's whichever of "methods.M.K" and Dubbo's "M.K"
// each side used (tester8 #3: a consumer's Sleep.timeout=2s lost to the
// provider's methods.Sleep.timeout=200ms).
func TestMergeURLMethodKeySpellingsAreOneKey(t *testing.T) {
	provider := spi.MustParse("airnode://10.0.0.1:20880/demo.Echo?methods=Echo,Sleep&methods.Sleep.timeout=200ms&Echo.timeout=300ms&methods.Echo.retries=5&timeout=1s")
	for _, tc := range []struct {
		consumer string
		method   string
		key      string
		want     string
		source   string
	}{
		{"c:///demo.Echo?Sleep.timeout=2s", "Sleep", "timeout", "2s", "Sleep.timeout"},
		{"c:///demo.Echo?methods.Sleep.timeout=2s", "Sleep", "timeout", "2s", "methods.Sleep.timeout"},
		{"c:///demo.Echo?methods.Echo.timeout=2s", "Echo", "timeout", "2s", "methods.Echo.timeout"},
		{"c:///demo.Echo?Echo.timeout=2s", "Echo", "timeout", "2s", "Echo.timeout"},
		// other keys and methods of the provider stay
		{"c:///demo.Echo?Sleep.timeout=2s", "Echo", "timeout", "300ms", "Echo.timeout"},
		{"c:///demo.Echo?Sleep.timeout=2s", "Echo", "retries", "5", "methods.Echo.retries"},
		// the service-level key does not remove a provider's method-level one
		{"c:///demo.Echo?timeout=5s", "Sleep", "timeout", "200ms", "methods.Sleep.timeout"},
	} {
		m := spi.MergeURL(provider, spi.MustParse(tc.consumer))
		v, src, _ := m.MethodParam(tc.method, tc.key)
		if v != tc.want || src != tc.source {
			t.Errorf("consumer %s: %s.%s = %s from %s, want %s from %s (merged %s)", tc.consumer, tc.method, tc.key, v, src, tc.want, tc.source, m)
		}
	}
	// A provider listing no methods: Dubbo's form counts for an exported
	// Go method name only.
	bare := spi.MustParse("airnode://10.0.0.1:20880/demo.Echo?methods.Sleep.timeout=200ms&methods.heartbeat.interval=1s")
	m := spi.MergeURL(bare, spi.MustParse("c:///demo.Echo?Sleep.timeout=2s&heartbeat.interval=5s"))
	if v, _, _ := m.MethodParam("Sleep", "timeout"); v != "2s" {
		t.Errorf("Sleep.timeout = %s, want the consumer's 2s (merged %s)", v, m)
	}
	if _, ok := m.Param("methods.heartbeat.interval"); !ok {
		t.Errorf("heartbeat.interval is no method key, but it removed methods.heartbeat.interval: %s", m)
	}
	// Provider-owned keys are not method-level keys.
	owned := spi.MergeURL(spi.MustParse("airnode://h:1/x?methods=Echo&Echo.token=s"), spi.MustParse("c:///x?methods.Echo.token=guess"))
	if v, ok := owned.Param("Echo.token"); !ok || v != "s" {
		t.Errorf("provider's Echo.token removed by the consumer's methods.Echo.token: %s", owned)
	}
}

// ParseDuration's errors say what is wrong (tester8 #10: an overflowing
// number and a negative one got the generic "want a duration such as").
func TestParseDurationErrors(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want error
	}{
		{"99999999999999", spi.ErrDurationTooLarge},
		{"99999999999999999999999", spi.ErrDurationTooLarge},
		{"9999999999h", spi.ErrDurationTooLarge},
		{"-5", spi.ErrDurationNegative},
		{"-99999999999999999999999", spi.ErrDurationNegative},
		{"-1s", spi.ErrDurationNegative},
		{"-9999999999h", spi.ErrDurationNegative},
	} {
		if _, err := spi.ParseDuration(tc.v); !errors.Is(err, tc.want) {
			t.Errorf("ParseDuration(%q) = %v, want %v", tc.v, err, tc.want)
		}
	}
	for _, v := range []string{"abc", "-abc", "1x", ""} {
		_, err := spi.ParseDuration(v)
		if err == nil || errors.Is(err, spi.ErrDurationTooLarge) || errors.Is(err, spi.ErrDurationNegative) {
			t.Errorf("ParseDuration(%q) = %v, want a syntax error", v, err)
		}
	}
	if d, err := spi.ParseDuration(strconv.FormatInt(spi.MaxDurationMillis, 10)); err != nil || d <= 0 {
		t.Errorf("MaxDurationMillis: %v, %v", d, err)
	}
	_, err := spi.MustParse("a://h/x?timeout=99999999999999").Duration("timeout", 0)
	if err == nil || !strings.Contains(err.Error(), "at most 9223372036854") || !strings.Contains(err.Error(), "too large") {
		t.Errorf("Duration of an overflowing number: %v", err)
	}
	_, err = spi.MustParse("a://h/x?timeout=-5").Duration("timeout", 0)
	if err == nil || !strings.Contains(err.Error(), "positive") {
		t.Errorf("Duration of -5: %v", err)
	}
}

// A scheme followed by ':' alone is named as such (tester8 #10:
// "--registry file:relative" said "has no scheme"); a file URL's error
// says the path must be absolute.
func TestParseSchemeWithoutSlashes(t *testing.T) {
	for _, tc := range []struct{ s, want string }{
		{"file:relative", "file:///abs/dir"},
		{"FILE:tmp/reg", "file:///abs/dir"},
		{"zookeeper:/teamA", `scheme "zookeeper" is not followed by "//"`},
		{"127.0.0.1:24081", "has no scheme"},
		{"localhost:2181", "has no scheme"},
		{"demo.Echo", "has no scheme"},
	} {
		if _, err := spi.Parse(tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.s, err, tc.want)
		}
	}
}
