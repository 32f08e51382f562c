package cli

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
	"github.com/airnode/airnode/spi"
)

// airnode runs the command in-process with stand-in catalogs, an empty
// environment and the given args; it returns the exit status and output.
func airnode(t *testing.T, cat func() *extension.Catalogs, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := newApp(&stdout, &stderr)
	a.environ = func() []string { return nil }
	if cat != nil {
		a.newCatalogs = func() (*extension.Catalogs, error) { return cat(), nil }
	}
	code := runApp(context.Background(), a, args)
	return code, stdout.String(), stderr.String()
}

// row matches a table row whose cells are the given words in order.
func row(cells ...string) *regexp.Regexp {
	for i, c := range cells {
		cells[i] = regexp.QuoteMeta(c)
	}
	return regexp.MustCompile(`(?m)^ *` + strings.Join(cells, `\s+`) + `\s*$`)
}

func TestListPrintsPoints(t *testing.T) {
	cat := func() *extension.Catalogs {
		c := extensiontest.Catalogs()
		if err := c.LoadBalance.Register(&extensiontest.LoadBalance{Ext: extensiontest.Ext{ExtName: "acme.p2c"}}, "/opt/airnode/plugins/p2c"); err != nil {
			t.Fatal(err)
		}
		return c
	}
	code, out, errOut := airnode(t, cat, "list")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, r := range []*regexp.Regexp{
		row("POINT", "URL KEY", "DEFAULT", "EXTENSION", "ORIGIN", "NOTES"),
		row("cluster", "cluster", "failover", "failfast", "bundled"),
		row("loadbalance", "loadbalance", "random", "acme.p2c", "/opt/airnode/plugins/p2c"),
		row("random", "bundled", "default"),
		row("registry", "(URL scheme)", "file", "direct", "bundled"),
		row("filter", "filter", "(activated set)", "accesslog", "bundled", `activated on provider when key "accesslog" is present, order 0`),
		row("transport", "transport", "smux", "smux", "bundled", "default"),
	} {
		if !r.MatchString(out) {
			t.Errorf("output lacks a row matching %s:\n%s", r, out)
		}
	}
	// Points appear sorted.
	var order []string
	for _, p := range []string{"cluster", "codec", "filter", "heartbeat", "loadbalance", "registry", "transport"} {
		order = append(order, p)
		if !strings.Contains(out, "\n"+p+" ") {
			t.Errorf("point %s missing", p)
		}
	}
	last := -1
	for _, p := range order {
		i := strings.Index(out, "\n"+p+" ")
		if i < last {
			t.Errorf("point %s out of order", p)
		}
		last = i
	}

	// With nothing registered, list still works.
	code, out, _ = airnode(t, extension.New, "list")
	if code != 0 || !row("codec", "codec", "msgpack", "(none registered)").MatchString(out) {
		t.Fatalf("empty catalogs: exit %d\n%s", code, out)
	}
}

// keyedLB is a stand-in plugin balancer that declares one key.
type keyedLB struct{ extensiontest.LoadBalance }

func (keyedLB) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: "p2c.choices", Type: spi.KeyTypeInt, Default: "2", Doc: "providers sampled per pick, 2..8"},
		{Key: "p2c.mode", Type: spi.KeyTypeEnum, Values: []string{"fast", "fair"}, Doc: "how ties break"},
		{Key: "p2c.secret", Type: spi.KeyTypeString, Secret: true, Doc: "a credential"},
	}
}

// TestListKeys: --keys, POINT and POINT EXTENSION print each extension's
// declared keys under it; an extension declaring none gets one row saying
// so; an unknown point or extension is refused with a close match; POINT
// and --explain do not go together.
func TestListKeys(t *testing.T) {
	cat := func() *extension.Catalogs {
		c := extensiontest.Catalogs()
		if err := c.LoadBalance.Register(&keyedLB{extensiontest.LoadBalance{Ext: extensiontest.Ext{ExtName: "acme.p2c"}}}, "/opt/airnode/plugins/p2c"); err != nil {
			t.Fatal(err)
		}
		if err := c.LoadBalance.Register(&extensiontest.LoadBalance{Ext: extensiontest.Ext{ExtName: "acme.plain"}}, "/opt/airnode/plugins/plain"); err != nil {
			t.Fatal(err)
		}
		return c
	}
	code, out, errOut := airnode(t, cat, "list", "--keys")
	if code != 0 {
		t.Fatalf("--keys: exit %d, stderr %s", code, errOut)
	}
	for _, r := range []*regexp.Regexp{
		row("POINT", "EXTENSION", "KEY", "TYPE", "DEFAULT", "MEANING"),
		row("loadbalance", "acme.p2c", "p2c.choices", "int", "2", "providers sampled per pick, 2..8"),
		row("p2c.mode", "fast|fair", "-", "how ties break"),
		row("random", "-", "no URL keys of its own"),
		row("acme.plain", "-", "declares no URL keys"),
		row("cluster", "failfast", "-", "no URL keys of its own"),
		// tester73 #8: a secret key says so
		row("p2c.secret", "string", "-", "a credential (secret: URLs in logs and output show ***)"),
	} {
		if !r.MatchString(out) {
			t.Errorf("--keys lacks a row matching %s:\n%s", r, out)
		}
	}
	code, out, errOut = airnode(t, cat, "list", "loadbalance")
	if code != 0 || !row("loadbalance", "acme.p2c", "p2c.choices", "int", "2", "providers sampled per pick, 2..8").MatchString(out) || strings.Contains(out, "cluster") {
		t.Errorf("list loadbalance: exit %d stderr %s\n%s", code, errOut, out)
	}
	code, out, errOut = airnode(t, cat, "list", "loadbalance", "random")
	if code != 0 || !row("loadbalance", "random", "-", "no URL keys of its own").MatchString(out) || strings.Contains(out, "p2c") {
		t.Errorf("list loadbalance random: exit %d stderr %s\n%s", code, errOut, out)
	}
	code, _, errOut = airnode(t, cat, "list", "lodbalance")
	if code != exitUsage || !strings.Contains(errOut, `unknown point "lodbalance" (available: cluster, codec, filter, heartbeat, loadbalance, registry, transport, and kernel for the kernel's own keys); did you mean "loadbalance"?`) {
		t.Errorf("list lodbalance: exit %d stderr %q", code, errOut)
	}
	code, _, errOut = airnode(t, cat, "list", "loadbalance", "acme.p2")
	if code != 1 || !strings.Contains(errOut, `unknown loadbalance "acme.p2" (available: `) || !strings.Contains(errOut, `did you mean "acme.p2c"?`) {
		t.Errorf("list loadbalance acme.p2: exit %d stderr %q", code, errOut)
	}
	// two forms that contradict each other: a usage error, exit 2
	code, _, errOut = airnode(t, cat, "list", "loadbalance", "--explain", "airnode://h/x")
	if code != 2 || !strings.Contains(errOut, "not both") {
		t.Errorf("POINT with --explain: exit %d stderr %q", code, errOut)
	}
}

func TestListExplain(t *testing.T) {
	code, out, errOut := airnode(t, extensiontest.Catalogs, "list", "--explain",
		"airnode://127.0.0.1:20880/demo.Echo?loadbalance=roundrobin&methods.Echo.loadbalance=random&heartbeat=5000&actives=3")
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, r := range []*regexp.Regexp{
		row("service", "demo.Echo"),
		row("methods", "Echo"),
		row("loadbalance", "service", "roundrobin", "bundled", "service-level key loadbalance=roundrobin"),
		row("loadbalance", "method Echo", "random", "bundled", "method-level key methods.Echo.loadbalance=random"),
		row("cluster", "method Echo", "failover", "bundled", "default (no cluster key)"),
		row("heartbeat", "service", "idle", "bundled", "service-level key heartbeat=5000 (bare number: default heartbeat with heartbeat.interval=5000 (ms))"),
		row("registry", "node", "file", "bundled", "default (no registry configured); not used by this URL: it names its providers (a direct reference)"),
		row("consumer", "service", "metrics, activelimit", "activated set"),
		row("provider", "service", "metrics", "activated set"),
	} {
		if !r.MatchString(out) {
			t.Errorf("output lacks a row matching %s:\n%s", r, out)
		}
	}
	if errOut != "" {
		t.Errorf("stderr: %s", errOut)
	}

	// Dubbo's <method>.<key> form and methods= list.
	code, out, _ = airnode(t, extensiontest.Catalogs, "list", "--explain", "airnode://h:20880/x?methods=Echo,Sleep&Sleep.loadbalance=leastactive&filter=-metrics")
	if code != 0 || !row("loadbalance", "method Sleep", "leastactive", "bundled", "method-level key Sleep.loadbalance=leastactive").MatchString(out) ||
		!row("consumer", "service", "(none)", "key filter=-metrics edits the activated set").MatchString(out) {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestListExplainProviderMerge(t *testing.T) {
	code, out, errOut := airnode(t, extensiontest.Catalogs, "list",
		"--explain", "consumer://10.0.0.9/demo.Echo?methods.Echo.timeout=200ms&timeout=500ms&weight=1&filter=accesslog",
		"--provider", "airnode://10.0.0.1:20880/demo.Echo?weight=200&methods=Echo,Sleep&retries=3&Sleep.retries=0&token=s&filter=-metrics")
	if code != 0 {
		t.Fatalf("exit %d stderr %s", code, errOut)
	}
	if !strings.Contains(out, "url      airnode://10.0.0.1:20880/demo.Echo?") {
		t.Errorf("merged URL is not the provider's base:\n%s", out)
	}
	for _, r := range []*regexp.Regexp{
		row("timeout", "service", "500ms", "SERVICE_URL query (timeout)"),
		row("timeout", "method Echo", "200ms", "SERVICE_URL query (methods.Echo.timeout)"),
		// tester74 #1: the provider's retries are its consumers' defaults
		row("retries", "service", "3", "provider (retries)"),
		row("retries", "method Sleep", "0", "provider (Sleep.retries)"),
		row("weight", "service", "200", "provider (weight)"), // provider-owned: the consumer's 1 is ignored
		row("connect.timeout", "service", "3s", "default"),
		// the provider builds its chain from its own URL, not the merged one
		row("provider", "service", "token", "key filter=-metrics edits the activated set"),
		row("consumer", "service", "metrics, accesslog", "key filter=accesslog edits the activated set"),
	} {
		if !r.MatchString(out) {
			t.Errorf("output lacks a row matching %s:\n%s", r, out)
		}
	}
	if code, _, errOut := airnode(t, extensiontest.Catalogs, "list", "--provider", "airnode://h/x"); code != exitUsage || !strings.Contains(errOut, "--provider URL needs --explain") {
		t.Fatalf("--provider alone: exit %d %q", code, errOut)
	}
	if code, _, _ := airnode(t, extensiontest.Catalogs, "list", "--explain", "airnode://h/x", "--provider", "nope"); code != exitUsage {
		t.Fatalf("bad --provider: exit %d", code)
	}
}

func TestListExplainErrors(t *testing.T) {
	tests := []struct {
		name string
		url  string
		want []string
		code int // 0 means 1, a failure of what list checked
	}{
		// a value of the URL's query that call refuses: a usage error
		// naming the key as given (fix-bs)
		{"did you mean", "airnode://h:20880/x?loadbalance=rundrobin",
			[]string{`airnode: list: --explain URL key loadbalance=rundrobin: service x: unknown loadbalance "rundrobin" (available: consistenthash, leastactive, random, roundrobin, shortestresponse); did you mean "roundrobin"?`}, exitUsage},
		{"malformed kernel key", "airnode://h:20880/x?timeout=abc", []string{`"timeout"`, `"abc"`}, exitUsage},
		{"malformed method-level key", "airnode://h:20880/x?methods.Echo.retries=many", []string{`"methods.Echo.retries"`, `"many"`}, exitUsage},
		{"extension Build rejects", "airnode://h:20880/x?heartbeat=dual&heartbeat.interval=-1s", []string{`heartbeat "dual"`, `"heartbeat.interval"`, `"-1s"`}, exitUsage},
		{"unknown filter", "airnode://h:20880/x?filter=tokn", []string{`unknown filter "tokn"`, `did you mean "token"?`}, exitUsage},
		// a SERVICE_URL of the wrong form is a usage error, as call's (fix-bj)
		{"bad URL", "airnode://::1:20880/x", []string{"brackets"}, exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := airnode(t, extensiontest.Catalogs, "list", "--explain", tt.url)
			if want := max(tt.code, 1); code != want {
				t.Fatalf("exit %d, want %d", code, want)
			}
			if !strings.HasPrefix(errOut, "airnode: ") {
				t.Errorf("stderr %q lacks the airnode: prefix", errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q lacks %q", errOut, w)
				}
			}
		})
	}
}

func TestRootFlags(t *testing.T) {
	code, out, _ := airnode(t, extensiontest.Catalogs, "--help")
	if code != 0 || !strings.Contains(out, "list") || !strings.Contains(out, "--log-format") || !strings.Contains(out, "--config") {
		t.Fatalf("--help: exit %d\n%s", code, out)
	}
	code, out, _ = airnode(t, extensiontest.Catalogs, "list", "--help")
	if code != 0 || !strings.Contains(out, "--explain") {
		t.Fatalf("list --help: exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"--log-format", "xml", "list"},
		{"--log-level", "loud", "list"},
		{"list", "--nope"},
		{"nope"},
		{"list", "extra-arg"},
	} {
		code, _, errOut := airnode(t, extensiontest.Catalogs, args...)
		// a bad --log-format/--log-level value, an unknown flag or command,
		// an unknown POINT (the points are fixed, fix-p): usage, 2
		want := exitUsage
		if code != want || !strings.HasPrefix(errOut, "airnode: ") {
			t.Errorf("%v: exit %d stderr %q, want %d and an airnode: error", args, code, errOut, want)
		}
	}
	if code, _, _ := airnode(t, extensiontest.Catalogs, "--log-format", "json", "--log-level", "debug", "list"); code != 0 {
		t.Errorf("valid log flags: exit %d", code)
	}
}

func TestListConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("registry: zookeeper://127.0.0.1:2181\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := airnode(t, extensiontest.Catalogs, "--config", good, "list", "--explain", "x")
	if code != 0 || !row("registry", "node", "zookeeper", "bundled", "scheme of the configured registry zookeeper://127.0.0.1:2181").MatchString(out) {
		t.Fatalf("exit %d stderr %s\n%s", code, errOut, out)
	}
	// a digest password is not printed (tester68 F3: this row was the one
	// place that showed it)
	secret := filepath.Join(dir, "secret.yaml")
	if err := os.WriteFile(secret, []byte("registry: zookeeper://ops:s3cretZK@127.0.0.1:2181\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = airnode(t, extensiontest.Catalogs, "--config", secret, "list", "--explain", "x")
	if code != 0 || strings.Contains(out+errOut, "s3cretZK") || !row("registry", "node", "zookeeper", "bundled", "scheme of the configured registry zookeeper://ops:***@127.0.0.1:2181").MatchString(out) {
		t.Fatalf("exit %d stderr %s\n%s\nwant the password hidden", code, errOut, out)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("regsitry: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = airnode(t, extensiontest.Catalogs, "--config", bad, "list")
	if code != 1 || !strings.Contains(errOut, `unknown key "regsitry"`) || !strings.Contains(errOut, bad) {
		t.Fatalf("bad config: exit %d stderr %q", code, errOut)
	}
	code, _, errOut = airnode(t, extensiontest.Catalogs, "--config", filepath.Join(dir, "missing.yaml"), "list")
	if code != 1 || !strings.Contains(errOut, "missing.yaml") {
		t.Fatalf("missing config: exit %d stderr %q", code, errOut)
	}
}

// TestBinary runs the acceptance commands of issue 2 with the airnode
// binary (TestMain's) against the real bundled catalogs, from the
// repository root so that ./plugins.yaml is read.
func TestBinary(t *testing.T) {
	runBin := func(args ...string) (int, string, string) {
		cmd := exec.Command(binary, args...)
		cmd.Dir = ".." // repository root: reads ./plugins.yaml
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}

	code, out, errOut := runBin("list")
	if code != 0 || !row("POINT", "URL KEY", "DEFAULT", "EXTENSION", "ORIGIN", "NOTES").MatchString(out) {
		t.Fatalf("list: exit %d stderr %s\n%s", code, errOut, out)
	}
	for _, p := range []string{"cluster", "codec", "filter", "heartbeat", "loadbalance", "registry", "transport"} {
		if !regexp.MustCompile(`(?m)^` + p + ` `).MatchString(out) {
			t.Errorf("list lacks point %s", p)
		}
	}

	// The bundled extensions' keys, from the real binary.
	code, out, errOut = runBin("list", "--keys")
	if code != 0 {
		t.Fatalf("list --keys: exit %d stderr %s\n%s", code, errOut, out)
	}
	for _, r := range []*regexp.Regexp{
		row("POINT", "EXTENSION", "KEY", "TYPE", "DEFAULT", "MEANING"),
		regexp.MustCompile(`(?m)^transport +smux +smux\.buffer +size +8MiB +receive buffer per session`),
		regexp.MustCompile(`(?m)^ +leastactive +weight +int +100 +provider weight`),
		regexp.MustCompile(`(?m)^ +warmup +duration +10m +`),
		regexp.MustCompile(`(?m)^ +zookeeper +backup +hosts +- +`),
		row("cluster", "failfast", "-", "no URL keys of its own"),
	} {
		if !r.MatchString(out) {
			t.Errorf("list --keys lacks a row matching %s:\n%s", r, out)
		}
	}
	code, out, errOut = runBin("list", "heartbeat", "idle")
	if code != 0 || !regexp.MustCompile(`(?m)^heartbeat +idle +heartbeat\.interval +duration +60s +`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^ +heartbeat\.retries +int +3 +`).MatchString(out) || strings.Contains(out, "dual") {
		t.Errorf("list heartbeat idle: exit %d stderr %s\n%s", code, errOut, out)
	}

	// the URL's value: a usage error (fix-bs)
	code, _, errOut = runBin("list", "--explain", "airnode://h:20880/x?timeout=abc")
	if code != exitUsage || !strings.Contains(errOut, `"timeout"`) || !strings.Contains(errOut, `"abc"`) {
		t.Errorf("timeout=abc: exit %d stderr %q", code, errOut)
	}
	code, _, errOut = runBin("list", "--explain", "airnode://h:20880/x?loadbalance=rundrobin")
	if code != exitUsage || !strings.Contains(errOut, `unknown loadbalance "rundrobin" (available: `) {
		t.Errorf("rundrobin: exit %d stderr %q", code, errOut)
	}

	// Against the real bundle (metrics, accesslog, ... filters that need
	// side=): the help example and its --provider form exit 0.
	if !strings.Contains(errOut, `did you mean "roundrobin"?`) {
		t.Errorf("rundrobin: no suggestion in %q", errOut)
	}
	example := "airnode://127.0.0.1:20880/demo.Echo?loadbalance=roundrobin&methods.Echo.loadbalance=random"
	code, out, errOut = runBin("list", "--explain", example)
	if code != 0 || errOut != "" ||
		!row("loadbalance", "service", "roundrobin", "bundled", "service-level key loadbalance=roundrobin").MatchString(out) ||
		!row("loadbalance", "method Echo", "random", "bundled", "method-level key methods.Echo.loadbalance=random").MatchString(out) {
		t.Errorf("explain: exit %d stderr %s\n%s", code, errOut, out)
	}
	code, out, errOut = runBin("list", "--explain", example, "--provider", "airnode://127.0.0.1:20880/demo.Echo?token=s")
	if code != 0 || errOut != "" || !row("provider", "service", "metrics, token", "activated set").MatchString(out) {
		t.Errorf("explain --provider: exit %d stderr %s\n%s", code, errOut, out)
	}
}

// Extensions log through slog.Default(): during a command it follows
// --log-format and --log-level, and it is restored afterwards.
func TestDefaultLoggerFollowsLogFlags(t *testing.T) {
	before := slog.Default()
	cat := func() *extension.Catalogs {
		slog.Default().Warn("loadbalance: probe", "k", "v")
		slog.Default().Info("hidden at warn")
		return extensiontest.Catalogs()
	}
	code, _, errOut := airnode(t, cat, "--log-format", "json", "--log-level", "warn", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, `"level":"WARN","msg":"loadbalance: probe","k":"v"`) || strings.Contains(errOut, "hidden at warn") {
		t.Errorf("stderr %q: want the warning as JSON and no info line", errOut)
	}
	if slog.Default() != before {
		t.Error("slog.Default() not restored after the command")
	}
}

// A malformed kernel key that an extension's Build already reports is not
// reported a second time by the kernel-key check.
func TestExplainReportsABadKeyOnce(t *testing.T) {
	code, _, errOut := airnode(t, nil, "list", "--explain", "airnode://h:20880/x?heartbeat=dual&heartbeat.interval=abc&retries=x")
	// the URL's values: a usage error (fix-bs)
	if code != exitUsage || strings.Count(errOut, `"heartbeat.interval"`) != 1 || strings.Count(errOut, `"retries"`) != 1 {
		t.Errorf("exit %d, stderr %q: want each bad key named once", code, errOut)
	}
}

// list --explain shows the provider key dispatcher with the extension
// points (default, or the key's value) and reports an unknown value in the
// kernel's words; the values it accepts are exactly the kernel's (the
// kernel's refusal lists them).
func TestListExplainDispatcher(t *testing.T) {
	for url, want := range map[string]*regexp.Regexp{
		"airnode://h:1/x":                   row("dispatcher", "service", "adaptive", "kernel", "default (no dispatcher key), provider side"),
		"airnode://h:1/x?dispatcher=all":    row("dispatcher", "service", "all", "kernel", "service-level key dispatcher=all, provider side"),
		"airnode://h:1/x?dispatcher=direct": row("dispatcher", "service", "direct", "kernel", "service-level key dispatcher=direct, provider side"),
	} {
		code, out, errOut := airnode(t, extensiontest.Catalogs, "list", "--explain", url)
		if code != 0 || !want.MatchString(out) {
			t.Errorf("list --explain %s: exit %d, stderr %q, want a row %s:\n%s", url, code, errOut, want, out)
		}
		if i, j := strings.Index(out, "\ncodec "), strings.Index(out, "\ndispatcher "); i < 0 || j < i {
			t.Errorf("list --explain %s: the dispatcher row is not in point order:\n%s", url, out)
		}
	}
	code, out, errOut := airnode(t, extensiontest.Catalogs, "list", "--explain", "airnode://h:1/x?dispatcher=dirct")
	// the kernel's words, and the error alone, no table (nu39 #10); a
	// usage error naming the URL's key (fix-bs)
	want := `airnode: list: --explain URL key dispatcher=dirct: service x: invalid value "dirct" for URL key "dispatcher": want one of adaptive, all, direct (did you mean "direct"?)`
	if code != exitUsage || !strings.Contains(errOut, want) || out != "" {
		t.Errorf("dispatcher=dirct: exit %d, stderr %q, want %q and no table; stdout:\n%s", code, errOut, want, out)
	}

	n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := n.Export(ctx, demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?dispatcher=none"))
	var pe *spi.ParamError
	if !errors.As(err, &pe) || pe.Key != keyDispatcher || pe.Want != "one of "+strings.Join(dispatchers, ", ") {
		t.Fatalf("the kernel refuses dispatcher=none with %v; want it to list exactly %v (update dispatchers in list.go)", err, dispatchers)
	}
}
