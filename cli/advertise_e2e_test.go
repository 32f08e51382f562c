package cli

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// serve --advertise publishes another address than the one listened on
// (tester16 finding 3): listening on 0.0.0.0 and advertising 127.0.0.2
// (all of 127/8 is loopback on Linux: a second "interface" address), a
// consumer through the file registry finds 127.0.0.2 and is served
// there; listening on 127.0.0.1 only, the same advertise is refused, and
// serve warned of it at start.
func TestServeAdvertiseReachedOnlyWhereItListens(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := serve(t, "0.0.0.0:0", dir, "--advertise", "127.0.0.2")
	if !strings.HasPrefix(p.addr, "127.0.0.2:") {
		t.Fatalf("serving addr=%s, want 127.0.0.2:PORT", p.addr)
	}
	ls := runCommand(t, 20*time.Second, nil, "registry", "ls", "demo.Echo", "--registry", "file://"+dir)
	if ls.code != 0 || !strings.Contains(ls.stdout, p.addr) || strings.Contains(ls.stdout, "advertise") {
		t.Fatalf("registry ls: exit %d\n%s%s", ls.code, ls.stdout, ls.stderr)
	}
	expectOK(t, call(t, nil, "--registry", "file://"+dir, "demo.Echo", "Echo", `"via 127.0.0.2"`), `"via 127.0.0.2"`)

	dir2 := t.TempDir()
	q := serve(t, "127.0.0.1:0", dir2, "--advertise", "127.0.0.2")
	if !strings.HasPrefix(q.addr, "127.0.0.2:") {
		t.Fatalf("serving addr=%s, want 127.0.0.2:PORT", q.addr)
	}
	waitFor(t, "the warning of an address not listened on", func() bool {
		return strings.Contains(q.logText(), "an address of this host the provider does not listen on (it listens on 127.0.0.1 only)")
	})
	r := call(t, nil, "--registry", "file://"+dir2, "demo.Echo", "Echo", `"x"`)
	if r.code == 0 || !strings.Contains(r.stderr, "connection refused") || !strings.Contains(r.stderr, q.addr) {
		t.Fatalf("call of a provider advertised where it does not listen: exit %d, %q", r.code, r.stderr)
	}
}

// --advertise takes HOST:PORT, [IPv6]:PORT, :PORT and interface names;
// AIRNODE_ADVERTISE, the file's advertise key and Dubbo's
// DUBBO_IP_TO_REGISTRY / DUBBO_PORT_TO_REGISTRY set it too (the flag
// first, Dubbo's variables only when nothing else does); a bad value, or
// -p advertise= with another value, exits 1 before listening.
func TestServeAdvertiseForms(t *testing.T) {
	t.Parallel()
	env := func(dir string, kv ...string) []string { return append([]string{"XDG_RUNTIME_DIR=" + dir}, kv...) }
	start := func(listen string, e []string, args ...string) *provider {
		dir := t.TempDir()
		return startServe(t, listen, "file://"+dir, env(dir, e...), "", args...)
	}
	check := func(p *provider, want string) {
		t.Helper()
		if p.addr != want {
			t.Errorf("serving addr=%s, want %s", p.addr, want)
		}
	}
	check(start("127.0.0.1:0", nil, "--advertise", "127.0.0.2:30880"), "127.0.0.2:30880")
	check(start("127.0.0.1:0", []string{"AIRNODE_ADVERTISE=127.0.0.3:30881"}), "127.0.0.3:30881")
	check(start("127.0.0.1:0", []string{"AIRNODE_ADVERTISE=127.0.0.3:30881"}, "--advertise", "127.0.0.4:30882"), "127.0.0.4:30882")
	check(start("127.0.0.1:0", []string{"DUBBO_IP_TO_REGISTRY=127.0.0.5", "DUBBO_PORT_TO_REGISTRY=30883"}), "127.0.0.5:30883")
	check(start("127.0.0.1:0", []string{"DUBBO_PORT_TO_REGISTRY=30884"}), "127.0.0.1:30884")
	check(start("127.0.0.1:0", []string{"DUBBO_IP_TO_REGISTRY=127.0.0.5", "AIRNODE_ADVERTISE=127.0.0.6:30885"}), "127.0.0.6:30885")
	check(start("127.0.0.1:0", nil, "--advertise", "127.0.0.2:30886", "-p", "advertise=127.0.0.2:30886"), "127.0.0.2:30886")
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		ln.Close()
		check(start("[::1]:0", nil, "--advertise", "[::1]:30887"), "[::1]:30887")
	} else {
		t.Logf("no IPv6 loopback: %v", err)
	}
	if _, err := net.InterfaceByName("lo"); err == nil {
		p := start("127.0.0.1:0", nil, "--advertise", "lo")
		if !strings.HasPrefix(p.addr, "127.0.0.1:") {
			t.Errorf("--advertise lo: serving addr=%s, want lo's 127.0.0.1", p.addr)
		}
		expectOK(t, call(t, nil, "--registry", p.reg, "demo.Echo", "Echo", `"lo"`), `"lo"`)
	}
	cfgDir := t.TempDir()
	cfgFile := filepath.Join(cfgDir, "plugins.yaml")
	if err := os.WriteFile(cfgFile, []byte("advertise: 127.0.0.7:30888\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check(start("127.0.0.1:0", nil, "--config", cfgFile), "127.0.0.7:30888")

	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--advertise", "::1"}, "IPv6 addresses need brackets: [::1]"},
		{nil, []string{"--advertise", "127.0.0.1:0"}, "must be 1-65535"},
		{nil, []string{"--advertise", "0.0.0.0"}, "every interface"},
		{nil, []string{"--advertise", "http://x"}, "flag --advertise"},
		{[]string{"AIRNODE_ADVERTISE=a b"}, nil, "environment AIRNODE_ADVERTISE"},
		{[]string{"DUBBO_IP_TO_REGISTRY=10.0.0.300"}, nil, "DUBBO_IP_TO_REGISTRY"},
		{nil, []string{"--advertise", "127.0.0.2", "-p", "advertise=127.0.0.3"}, "-p advertise=127.0.0.3 conflicts with --advertise 127.0.0.2"},
		{nil, []string{"-p", "advertise=[::1"}, `URL key "advertise"`},
		{nil, []string{"--advertise", "localhost"}, ""}, // a name that resolves: published as given (one that does not: TestAbuse2_F8_AdvertiseUnresolvableName)
	} {
		dir := t.TempDir()
		args := append([]string{"--listen", "127.0.0.1:0", "--registry", "file://" + dir, "--shutdown-wait", "0"}, tc.args...)
		if tc.want == "" {
			p := startServe(t, "127.0.0.1:0", "file://"+dir, env(dir, tc.env...), "", tc.args...)
			if !strings.HasPrefix(p.addr, "localhost:") {
				t.Errorf("%v: serving addr=%s, want the name as given", tc.args, p.addr)
			}
			continue
		}
		r := runCommand(t, 20*time.Second, env(dir, tc.env...), "serve", args...)
		code := 1
		if strings.Contains(tc.want, " conflicts with ") || tc.env == nil && len(tc.args) == 2 && tc.args[0] == "--advertise" {
			code = 2 // two flags that contradict each other, a flag's value refused (fix-p): a usage error
		}
		if r.code != code || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "msg=listening") {
			t.Errorf("%v %v: exit %d, stderr %q; want exit %d before listening, naming %q", tc.env, tc.args, r.code, r.stderr, code, tc.want)
		}
	}
}

// --listen with a name publishes the address bound, not the name
// (tester16 findings 4 and 8): localhost publishes 127.0.0.1.
func TestServeListenLocalhostPublishesTheIP(t *testing.T) {
	t.Parallel()
	p := serve(t, "localhost:0", t.TempDir())
	host, _, err := net.SplitHostPort(p.addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		t.Fatalf("--listen localhost:0 published %s, want a loopback IP address", p.addr)
	}
	expectOK(t, call(t, nil, "--registry", p.reg, "demo.Echo", "Echo", `"named"`), `"named"`)
}

// A loopback address published to a registry other hosts read (a
// zookeeper:// URL) is warned of once at start, naming --advertise; to a
// file registry (one machine's) it is not. The ZooKeeper here is a
// closed loopback port and check=false: serve starts without a session
// (its entry is created when one is) and checks the address it publishes
// all the same.
func TestServeLoopbackToSharedRegistryWarns(t *testing.T) {
	t.Parallel()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	zk := "zookeeper://" + closed.Addr().String() + "?check=false&connect.timeout=200ms"
	closed.Close()
	const warning = "publishing a loopback address"
	dir := t.TempDir()
	p := startServe(t, "127.0.0.1:0", zk, []string{"XDG_RUNTIME_DIR=" + dir, "XDG_CACHE_HOME=" + dir}, "", "--shutdown-wait", "0")
	waitFor(t, "the loopback warning", func() bool { return strings.Contains(p.logText(), warning) })
	log := p.logText()
	if n := strings.Count(log, warning); n != 1 || !strings.Contains(log, "level=WARN") || !strings.Contains(log, "--advertise HOST[:PORT]") {
		t.Errorf("%d loopback warnings, want one at WARN naming --advertise:\n%s", n, log)
	}

	f := serve(t, "127.0.0.1:0", t.TempDir())
	expectOK(t, call(t, nil, "--registry", f.reg, "demo.Echo", "Echo", `"file"`), `"file"`) // past serve's start checks
	if strings.Contains(f.logText(), warning) {
		t.Errorf("a loopback address in a file registry was warned of:\n%s", f.logText())
	}
}

// withDubboAdvertise reads Dubbo's variables only without an advertise
// setting, brackets an IPv6 address, and names the variables in errors.
func TestServeAdvertiseDubboEnv(t *testing.T) {
	for _, tc := range []struct {
		set     string
		environ []string
		want    string
	}{
		{"", []string{"DUBBO_IP_TO_REGISTRY=10.0.0.1"}, "10.0.0.1"},
		{"", []string{"DUBBO_IP_TO_REGISTRY=2001:db8::1", "DUBBO_PORT_TO_REGISTRY=30880"}, "[2001:db8::1]:30880"},
		{"", []string{"DUBBO_PORT_TO_REGISTRY=30880"}, ":30880"},
		{"", []string{"DUBBO_IP_TO_REGISTRY=", "PATH=/bin"}, ""},
		{"eth1", []string{"DUBBO_IP_TO_REGISTRY=10.0.0.1"}, "eth1"},
	} {
		cfg := config.DefaultConfig()
		cfg.Advertise = tc.set
		got, err := withDubboAdvertise(cfg, tc.environ)
		if err != nil || got.Advertise != tc.want {
			t.Errorf("%q %v: %q, %v; want %q", tc.set, tc.environ, got.Advertise, err, tc.want)
		}
	}
	_, err := withDubboAdvertise(config.DefaultConfig(), []string{"DUBBO_PORT_TO_REGISTRY=0"})
	if err == nil || !strings.Contains(err.Error(), "DUBBO_PORT_TO_REGISTRY") || !strings.Contains(err.Error(), "1-65535") {
		t.Errorf("DUBBO_PORT_TO_REGISTRY=0: %v", err)
	}
}

// warnPublished, given the exports of a node: an advertised address of
// this host not listened on is a Warn; listening on every interface, or
// publishing the address listened on, says nothing (a loopback address in
// a registry other hosts read is the kernel's warning:
// TestCfg2_LoopbackPublishedWarnsOnce in kernel).
func TestServeAdvertiseWarnPublished(t *testing.T) {
	cat := bundle.Catalogs()
	n := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var exps []*kernel.Exporter
	for _, u := range []string{"airnode://127.0.0.1:0/demo.Echo", "airnode://127.0.0.1:0/demo.Echo?group=g", "airnode://127.0.0.1:0/demo.Echo?group=h&advertise=127.0.0.2"} {
		e, err := n.Export(ctx, demo.New("p", 100), spi.MustParse(u))
		if err != nil {
			t.Fatal(err)
		}
		exps = append(exps, e)
	}
	for _, tc := range []struct {
		listen string
		want   []string // substrings of the log, in order of the lines
	}{
		{":0", nil},
		{"0.0.0.0:0", nil},
		{"127.0.0.1:0", []string{
			"level=WARN msg=\"airnode serve: publishing " + exps[2].URL().Address() + ", an address of this host the provider does not listen on (it listens on 127.0.0.1 only)"}},
	} {
		var b strings.Builder
		logger := slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug}))
		warnPublished(logger, tc.listen, exps)
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		if b.Len() == 0 {
			lines = nil
		}
		if len(lines) != len(tc.want) {
			t.Errorf("listen %s: %d lines, want %d:\n%s", tc.listen, len(lines), len(tc.want), b.String())
			continue
		}
		for i, w := range tc.want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("listen %s: line %d\n%s\nlacks %q", tc.listen, i, lines[i], w)
			}
		}
	}
}

// list --explain shows the address serve with the configuration would
// publish (tester16 finding 11): the listen IP, the advertise setting,
// or why serve would fail.
func TestExplainShowsPublishedAddress(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"AIRNODE_LISTEN=127.0.0.1:7000"}, "publish    127.0.0.1:7000 (serve listens on 127.0.0.1:7000 and publishes this; --advertise HOST[:PORT] publishes another)"},
		{[]string{"AIRNODE_LISTEN=localhost:7000"}, "publish    127.0.0.1:7000 (serve listens on localhost:7000"},
		{[]string{"AIRNODE_LISTEN=0.0.0.0:7000", "AIRNODE_ADVERTISE=127.0.0.2"}, "publish    127.0.0.2:7000 (serve listens on 0.0.0.0:7000 and publishes this, its advertise setting)"},
		{[]string{"AIRNODE_LISTEN=127.0.0.1:0", "AIRNODE_ADVERTISE=:30880"}, "publish    127.0.0.1:30880 "},
	} {
		r := runCommand(t, 20*time.Second, append([]string{"XDG_RUNTIME_DIR=" + dir}, tc.env...), "list", "--explain", "demo.Echo")
		if r.code != 0 || !strings.Contains(r.stdout, tc.want) {
			t.Errorf("%v: exit %d, want %q in\n%s%s", tc.env, r.code, tc.want, r.stdout, r.stderr)
		}
	}
}
