package cli

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// list --explain applies the config's protocol and services[i].params to
// the provider side as serve exports them, and reports a value serve
// refuses with serve's own error, naming the file and the key.
func TestListExplainAppliesConfigLikeServe(t *testing.T) {
	for _, body := range []string{
		"protocol: {dispatcher: directt}\n",
		"protocol: {transport: tpc}\n",
		"protocol: {timeout: abc}\n",
		"services:\n  - {interface: demo.Echo, params: {dispatcher: bogus}}\n",
	} {
		cfg := writeConfig(t, body)
		served := serveFails(t, "--config", cfg)
		code, _, errOut := airnode(t, nil, "--config", cfg, "list", "--explain", "airnode://127.0.0.1:20880/demo.Echo")
		msg := strings.TrimSpace(errOut)
		// each line names its own command (tester75 #1), the cause alike
		if code != 1 || !strings.HasPrefix(msg, "airnode: list: config: "+cfg+": key ") || !strings.Contains(served, "airnode: serve: "+strings.TrimPrefix(msg, "airnode: list: ")) {
			t.Errorf("config %q: list --explain exit %d, stderr %q; want exit 1 and serve's error:\n%s", body, code, errOut, served)
		}
	}

	// A provider key of a consumer point is published but not used by the
	// consumer: the row says so and serve accepts it, so explain exits 0.
	// (A service key: the consumer merges the provider URL from the registry.)
	// (A private registry without providers: the configuration's provider.)
	cfg := writeConfig(t, "registry: file://"+t.TempDir()+"\nprotocol: {loadbalance: rr, codec: msgpack}\n")
	code, out, errOut := airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo")
	if code != 0 || !row("loadbalance", "service", "random", "bundled",
		"default (no loadbalance key); the provider's loadbalance=rr (config protocol) is not used: the consumer chooses loadbalance from its own reference URL").MatchString(out) ||
		!row("codec", "service", "msgpack", "bundled", "service-level key codec=msgpack, from the config's protocol").MatchString(out) {
		t.Errorf("protocol loadbalance=rr: exit %d, stderr %q\n%s", code, errOut, out)
	}
	// The URL's own key is not blamed on the file: it is named, a usage
	// error (fix-bs).
	cfg = writeConfig(t, "protocol: {dispatcher: direct}\n")
	code, _, errOut = airnode(t, nil, "--config", cfg, "list", "--explain", "airnode://127.0.0.1:20880/demo.Echo?dispatcher=al")
	if code != exitUsage || !strings.Contains(errOut, "airnode: list: --explain URL key dispatcher=al: ") || strings.Contains(errOut, cfg) || !strings.Contains(errOut, `invalid value "al" for URL key "dispatcher"`) {
		t.Errorf("URL dispatcher=al over the file's: exit %d, stderr %q", code, errOut)
	}
}

// Explain shows method rows only for the points and keys the kernel
// resolves per method (cluster, loadbalance, codec; timeout, retries, ...)
// and warns, exit 0, about a method-level key of a per-connection point.
func TestListExplainMethodRowsOnlyForPerMethodPoints(t *testing.T) {
	code, out, errOut := airnode(t, nil, "list", "--explain",
		"airnode://127.0.0.1:20880/demo.Echo?methods.Echo.transport=tcp&methods.Echo.connect.timeout=1s&methods.Echo.codec=json&methods.Echo.timeout=5s&methods.Echo.filter=-metrics")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, w := range []string{
		"airnode: list: warning: methods.Echo.transport=tcp has no effect: transport is chosen per connection\n",
		"airnode: list: warning: methods.Echo.connect.timeout=1s has no effect: connect.timeout is chosen per connection\n",
		"airnode: list: warning: methods.Echo.filter=-metrics has no effect: the filter chain is built once per service, from service-level keys\n",
	} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	for _, bad := range []string{"\ntransport    method Echo", "\nconnect.timeout         method Echo", "\nconsumer  method Echo"} {
		if strings.Contains(out, bad) {
			t.Errorf("output has a method row the kernel does not resolve (%q):\n%s", bad, out)
		}
	}
	for _, r := range []string{"transport", "heartbeat"} {
		if !row(r, "service", map[string]string{"transport": "smux", "heartbeat": "idle"}[r], "bundled", "default (no "+r+" key)").MatchString(out) {
			t.Errorf("no service row for %s:\n%s", r, out)
		}
	}
	if !row("codec", "method Echo", "json", "bundled", "method-level key methods.Echo.codec=json").MatchString(out) ||
		!row("timeout", "method Echo", "5s", "SERVICE_URL query (methods.Echo.timeout)").MatchString(out) {
		t.Errorf("per-method codec or timeout row missing:\n%s", out)
	}
	// A method-level limit key activates its filter in the service's
	// chain (spi.Activation.PerMethod), which then limits that method.
	_, out, errOut = airnode(t, nil, "list", "--explain", "airnode://h:1/demo.Echo?methods.Echo.actives=2")
	if strings.Contains(errOut, "would change its consumer filter chain") || !strings.Contains(out, "metrics, activelimit") {
		t.Errorf("methods.Echo.actives alone: want activelimit in the service chain and no warning; stdout:\n%s\nstderr %q", out, errOut)
	}

	// What the warning says is what happens: against an smux provider,
	// methods.Echo.transport=tcp still calls over smux.
	p := serve(t, "127.0.0.1:0", t.TempDir())
	r := runCommand(t, 20*time.Second, nil, "call", "airnode://"+p.addr+"/demo.Echo?methods.Echo.transport=tcp", "Echo", `"m"`)
	expectOK(t, r, `"m"`)
}

// With --provider, cluster and load balancer are what the consumer's own
// URL selects; the provider's values are named as not used (its retries
// is the consumer's default), and a
// misspelled provider cluster is no error (the consumer never builds it).
func TestListExplainProviderPointsNotUsed(t *testing.T) {
	code, out, errOut := airnode(t, nil, "list", "--explain", "airnode://127.0.0.1:1/demo.Echo",
		"--provider", "airnode://127.0.0.1:1/demo.Echo?loadbalance=rr&cluster=failovr&retries=5")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, r := range []string{
		"loadbalance  service  random   bundled  default (no loadbalance key); the provider's loadbalance=rr is not used: the consumer chooses loadbalance from its own reference URL",
		"cluster      service  failover  bundled  default (no cluster key); the provider's cluster=failovr is not used: the consumer chooses cluster from its own reference URL",
	} {
		if !row(strings.Fields(r)...).MatchString(out) {
			t.Errorf("output lacks %q:\n%s", r, out)
		}
	}
	// tester74 #1: a provider's retries is its consumers' default
	if !row("retries", "service", "5", "provider (retries)").MatchString(out) {
		t.Errorf("retries: want the provider's 5:\n%s", out)
	}
	// The consumer's own value is used, and checked.
	code, out, _ = airnode(t, nil, "list", "--explain", "airnode://127.0.0.1:1/demo.Echo?loadbalance=roundrobin",
		"--provider", "airnode://127.0.0.1:1/demo.Echo?loadbalance=rr")
	if code != 0 || !row("loadbalance", "service", "roundrobin", "bundled", "service-level key loadbalance=roundrobin;",
		"the provider's loadbalance=rr is not used: the consumer chooses loadbalance from its own reference URL").MatchString(out) {
		t.Errorf("consumer loadbalance=roundrobin: exit %d\n%s", code, out)
	}
}

// An unknown dispatcher is reported in the kernel's own words (the error
// Export returns), for the URL as for the file.
func TestListExplainDispatcherErrorIsTheKernels(t *testing.T) {
	n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := n.Export(ctx, demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?dispatcher=directt"))
	var pe *spi.ParamError
	if !errors.As(err, &pe) {
		t.Fatalf("export dispatcher=directt: %v, want a *spi.ParamError", err)
	}
	code, _, errOut := airnode(t, nil, "list", "--explain", "airnode://127.0.0.1:20880/demo.Echo?dispatcher=directt")
	// and, first, Refer's warning of a dispatcher on a reference (cli3)
	const warn = "airnode: list: warning: dispatcher=directt has no effect: the provider's server decides it (serve -p dispatcher=...)\n"
	// the URL's key, named as given: a usage error (fix-bs)
	if code != exitUsage || errOut != warn+"airnode: list: --explain URL key dispatcher=directt: service demo.Echo: "+pe.Error()+"\n" {
		t.Errorf("exit %d, stderr %q; want Refer's warning and the kernel's %q", code, errOut, pe.Error())
	}
}

// Integers beyond int64 go as uint64 when they fit and are refused
// otherwise, never rounded through float64; the printed result keeps
// every digit.
func TestCallIntegersKeepPrecision(t *testing.T) {
	for in, want := range map[string]any{
		"12345678901234567890":      uint64(12345678901234567890),
		"18446744073709551615":      uint64(18446744073709551615),
		"-9223372036854775808":      int64(-9223372036854775808),
		"2000":                      int64(2000),
		"1.5":                       1.5,
		"1e3":                       1000.0,
		`"12345678901234567890123"`: "12345678901234567890123",
	} {
		got, err := decodeArg(in)
		if err != nil || got != want {
			t.Errorf("decodeArg(%s) = %#v, %v; want %#v", in, got, err, want)
		}
	}
	got, err := decodeArg(`[1, {"n": 12345678901234567890}]`)
	if err != nil || got.([]any)[1].(map[string]any)["n"] != uint64(12345678901234567890) {
		t.Errorf("nested: %#v, %v", got, err)
	}
	for _, in := range []string{"18446744073709551616", "-9223372036854775809", `{"a": [123456789012345678901]}`} {
		if _, err := decodeArg(in); err == nil || !strings.Contains(err.Error(), "does not fit in 64 bits") || !strings.Contains(err.Error(), "pass it as a string") {
			t.Errorf("decodeArg(%s): %v; want a refusal saying to pass it as a string", in, err)
		}
	}

	p := serve(t, "127.0.0.1:0", t.TempDir())
	url := "airnode://" + p.addr + "/demo.Echo"
	expectOK(t, runCommand(t, 20*time.Second, nil, "call", url, "Echo", "12345678901234567890"), "12345678901234567890")
	expectOK(t, runCommand(t, 20*time.Second, nil, "call", url, "Echo", "--", "-9223372036854775808"), "-9223372036854775808")
	expectUsage(t, runCommand(t, 20*time.Second, nil, "call", url, "Echo", "123456789012345678901"),
		"airnode: call: ", "integer 123456789012345678901 does not fit in 64 bits") // an ARG_JSON the command cannot take: a usage error (fix-p)
}

// serve --listen and AIRNODE_LISTEN with an unbracketed IPv6 address say
// how to write it, as URL parsing does.
func TestServeListenIPv6NeedsBrackets(t *testing.T) {
	code, _, errOut := airnode(t, nil, "serve", "--listen", "::1:20896")
	if want := `airnode: serve: --listen "::1:20896": IPv6 addresses need brackets: [::1]:20896`; code != 1 || strings.TrimSpace(errOut) != want {
		t.Errorf("exit %d, stderr %q; want %q", code, errOut, want)
	}
	var stdout, stderr strings.Builder
	a := newApp(&stdout, &stderr)
	a.environ = func() []string { return []string{"AIRNODE_LISTEN=fe80::1:20896"} }
	if code := runApp(context.Background(), a, []string{"serve"}); code != 1 ||
		!strings.Contains(stderr.String(), `AIRNODE_LISTEN "fe80::1:20896": IPv6 addresses need brackets: [fe80::1]:20896`) {
		t.Errorf("AIRNODE_LISTEN: exit %d, stderr %q", code, stderr.String())
	}
	for _, ok := range []string{"[::1]:20896", "127.0.0.1:0", ":20880"} {
		if h := config.BracketHint(ok); h != "" {
			t.Errorf("config.BracketHint(%q) = %q, want none", ok, h)
		}
	}
}

// A direct URL without --provider never meets the provider's URL (the
// kernel's direct registry makes providers from the reference URL), so
// its transport and timeout rows are what call uses, not the config's
// protocol, which is named as the provider's and not used; with a service
// key (the registry) the provider's URL is merged as before. Against the
// real binary: a 1500 ms Sleep times out at the 1 s default over smux.
func TestListExplainDirectURLIgnoresConfigProtocol(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir()) // smux, as no config
	cfg := writeConfig(t, "protocol: {transport: tcp, timeout: 2s}\n")
	code, out, errOut := airnode(t, nil, "--config", cfg, "list", "--explain", p.url("demo.Echo"))
	notUsed := "is not used: a direct URL names its provider, and its consumer reads every key from its own URL"
	if code != 0 ||
		!row("transport", "service", "smux", "bundled", "default (no transport key); the provider's transport=tcp (config protocol) "+notUsed).MatchString(out) ||
		!row("timeout", "service", "1s", "default").MatchString(out) ||
		!row("service", "(the provider's timeout=2s (config protocol) "+notUsed+")").MatchString(out) ||
		!strings.Contains(out, "not used by this URL: it names its providers (a direct reference)") {
		t.Fatalf("direct URL: exit %d, stderr %q\n%s", code, errOut, out)
	}
	// What call does with the same config and URL: smux reaches the
	// provider, and the timeout is 1 s, not the protocol's 2 s.
	expectOK(t, runCommand(t, 20*time.Second, nil, "call", "--config", cfg, p.url("demo.Echo"), "Echo", `"s"`), `"s"`)
	// Which side reports the 1 s deadline first is a race: the consumer's
	// timer ("timed out after 1000ms") or the provider's copy of the
	// deadline ("timed out after 1s on the provider"; it read "consumer
	// deadline of 1s passed" before tester75 #3).
	r := runCommand(t, 20*time.Second, nil, "call", "--config", cfg, p.url("demo.Echo"), "Sleep", "1500")
	expectFail(t, r, "SERVER_TIMEOUT")
	if !strings.Contains(r.stderr, "timed out after 1") {
		t.Fatalf("Sleep 1500: %q; want a timeout at the 1 s default, not the protocol's 2 s", r.stderr)
	}

	// Provider-side rows still show the config's provider URL, as the provider's.
	cfg = writeConfig(t, "protocol: {dispatcher: all, executes: 5}\n")
	code, out, errOut = airnode(t, nil, "--config", cfg, "list", "--explain", p.url("demo.Echo"))
	if code != 0 || !row("dispatcher", "service", "all", "kernel", "service-level key dispatcher=all, provider side, from the config's protocol").MatchString(out) ||
		!row("executes", "service", "5", "protocol (executes)").MatchString(out) {
		t.Fatalf("direct URL, provider rows: exit %d, stderr %q\n%s", code, errOut, out)
	}
}

// With a registry, the consumer merges the provider URL serve registered
// (the config's protocol), so explain of a bare service key shows the
// protocol's transport and timeout, and call uses them: a 1500 ms Sleep
// succeeds within the protocol's 2 s over tcp.
func TestListExplainServiceKeyMergesProvider(t *testing.T) {
	dir := t.TempDir()
	cfg := writeConfig(t, "registry: file://"+dir+"\nprotocol: {transport: tcp, timeout: 2s}\n")
	code, out, errOut := airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo")
	if code != 0 || !row("url", "airnode:///demo.Echo?timeout=2s&transport=tcp").MatchString(out) ||
		!row("transport", "service", "tcp", "bundled", "service-level key transport=tcp, from the config's protocol").MatchString(out) ||
		!row("timeout", "service", "2s", "protocol (timeout)").MatchString(out) ||
		strings.Contains(out, "a direct reference") {
		t.Fatalf("list --explain demo.Echo: exit %d, stderr %q\n%s", code, errOut, out)
	}
	_ = serve(t, "127.0.0.1:0", dir, "--config", cfg)
	expectOK(t, runCommand(t, 20*time.Second, nil, "call", "--config", cfg, "demo.Echo", "Sleep", "1500"), "1500")

	// Every SERVICE_URL form call takes; call's own errors for a bad one.
	for in, want := range map[string]string{
		"g/demo.Echo:1.0":          "g/demo.Echo:1.0",
		"demo.Echo?loadbalance=rr": "demo.Echo",
		"airnode:///demo.Echo":     "demo.Echo",
	} {
		code, out, errOut := airnode(t, nil, "list", "--explain", in)
		if in == "demo.Echo?loadbalance=rr" {
			if code != exitUsage || !strings.Contains(errOut, `--explain URL key loadbalance=rr: service demo.Echo: unknown loadbalance "rr"`) {
				t.Errorf("list --explain %s: exit %d, stderr %q; want the unknown balancer", in, code, errOut)
			}
			continue
		}
		if code != 0 || !row("service", want).MatchString(out) {
			t.Errorf("list --explain %s: exit %d, stderr %q\n%s", in, code, errOut, out)
		}
	}
	_, err := parseServiceKey("g/")
	code, _, errOut = airnode(t, nil, "list", "--explain", "g/")
	if err == nil || code != exitUsage || errOut != "airnode: list --explain: "+err.Error()+"\n" {
		t.Errorf("list --explain g/: exit %d, stderr %q; want call's %v, a usage error", code, errOut, err)
	}
}

// Dubbo's method keys ("Sleep.timeout=200") get method rows as
// "methods.Sleep.timeout" does, since the kernel applies both: against
// the real binary a 1500 ms Sleep times out under Sleep.timeout=200 and
// succeeds under the service's timeout=3000 alone. A Dubbo-form key for a method the URL's
// "methods" list leaves out gets no row (the kernel does not apply it).
func TestListExplainDubboMethodKeys(t *testing.T) {
	u := "airnode://127.0.0.1:1/demo.Echo?Sleep.timeout=200&timeout=1000&Sleep.loadbalance=roundrobin"
	code, out, errOut := airnode(t, nil, "list", "--explain", u)
	if code != 0 || !row("methods", "Sleep").MatchString(out) ||
		!row("timeout", "service", "1s (written 1000)", "SERVICE_URL query (timeout)").MatchString(out) ||
		!row("timeout", "method Sleep", "200ms (written 200)", "SERVICE_URL query (Sleep.timeout)").MatchString(out) ||
		!row("loadbalance", "method Sleep", "roundrobin", "bundled", "method-level key Sleep.loadbalance=roundrobin").MatchString(out) {
		t.Fatalf("exit %d, stderr %q\n%s", code, errOut, out)
	}
	code, out, errOut = airnode(t, nil, "list", "--explain", "airnode://127.0.0.1:1/demo.Echo?methods=Echo&Sleep.timeout=200")
	if code != 0 || strings.Contains(out, "method Sleep") ||
		!strings.Contains(errOut, "airnode: list: warning: Sleep.timeout=200 has no effect: methods=Echo does not list Sleep (methods.Sleep.timeout applies anyway)\n") {
		t.Errorf("Sleep not in methods: exit %d, stderr %q\n%s", code, errOut, out)
	}

	p := serve(t, "127.0.0.1:0", t.TempDir())
	expectFail(t, runCommand(t, 20*time.Second, nil, "call", p.url("demo.Echo")+"?Sleep.timeout=200&timeout=3000", "Sleep", "1500"), "SERVER_TIMEOUT", "demo.Echo.Sleep")
	expectOK(t, runCommand(t, 20*time.Second, nil, "call", p.url("demo.Echo")+"?timeout=3000", "Sleep", "1500"), "1500")
}

// A key that neither airnode nor any extension reads is named in a
// warning (exit 0: it may be a plugin's or another tool's), with the key
// meant when it is a misspelling and the config key that set it.
func TestListExplainWarnsAboutUnknownKeys(t *testing.T) {
	code, out, errOut := airnode(t, nil, "list", "--explain", "airnode://127.0.0.1:1/demo.Echo?foo=bar&timout=3&smux.buffer=1MiB&tls=false&Sleep.timeout=200&methods.Echo.colour=red")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q\n%s", code, errOut, out)
	}
	for _, w := range []string{
		"airnode: list: warning: foo=bar is not read by airnode or any extension of this node (a plugin's or another tool's key, or a misspelling)\n",
		"airnode: list: warning: timout=3 is not read by airnode or any extension of this node (a plugin's or another tool's key, or a misspelling); did you mean \"timeout\"?\n",
		"airnode: list: warning: methods.Echo.colour=red is not read by airnode or any extension of this node",
	} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
	for _, k := range []string{"smux.buffer", "tls=", "Sleep.timeout"} {
		if strings.Contains(errOut, k) {
			t.Errorf("a key airnode reads is warned about (%s):\n%s", k, errOut)
		}
	}
	cfg := writeConfig(t, "registry: file://"+t.TempDir()+"\nprotocol: {colour: red}\nreferences: [{interface: demo.Echo, params: {shape: round}}]\n")
	_, _, errOut = airnode(t, nil, "--config", cfg, "list", "--explain", "demo.Echo")
	for _, w := range []string{"colour=red (config protocol) is not read", "shape=round (config reference) is not read"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
}
