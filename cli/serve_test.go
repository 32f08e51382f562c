package cli

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testaddr"
	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
	"github.com/airnode/airnode/spi"
)

// TestServeChecksEveryServiceBeforeExporting: a configuration serve
// cannot run (a service without implementation, a later service with an
// unknown transport, another payload bound than the first's on the same
// address, a TLS certificate that is not there, another transport on the
// same fixed address, TLS on for a later service on the first one's
// listener, or a method-level key for
// a method the service lacks) fails before the first export: nothing listens,
// nothing is registered, and serve exits 1 at once with the error, not
// after a shutdown wait (set to 5 s here, so that waiting would show).
func TestServeChecksEveryServiceBeforeExporting(t *testing.T) {
	ca := tlsconftest.NewCA(t, "airnode serve test CA")
	cert, key := ca.Issue(t, "provider")
	fixed := testaddr.Reserved(t)
	for _, tc := range []struct {
		name, config, want string
		listen             string // default 127.0.0.1:0
	}{
		{"no implementation", "services: [{interface: demo.Greeter}]\n",
			`airnode: serve: service "demo.Greeter": no implementation (built in: demo.Echo; service plugins: none)`, ""},
		{"second service's transport", "services:\n  - interface: demo.Echo\n    params: {group: b, transport: tcpp}\n",
			`key "services[0].params": unknown transport "tcpp"`, ""},
		{"second service's per-address key", "services:\n  - interface: demo.Echo\n    params: {group: b, payload: 1MiB}\n",
			`serve: service b/demo.Echo: URL key "payload" is "1MiB", but demo.Echo, exported first on the same address, uses its default`, ""},
		{"second service's TLS file", "services:\n  - interface: demo.Echo\n    params: {group: b, tls: true, tls.cert: /nonexistent/c.pem, tls.key: /nonexistent/k.pem}\n",
			`serve: service b/demo.Echo: tlsconf: tls.cert: open /nonexistent/c.pem: no such file or directory`, ""},
		// Tester finding (item 12): another transport on the same
		// fixed address failed to bind after the first export listened.
		{name: "second service's transport on a fixed address", listen: fixed,
			config: "services:\n  - interface: demo.Echo\n    params: {group: b, transport: tcp}\n",
			want: `serve: service b/demo.Echo: URL key "transport" is "tcp", but demo.Echo, exported first on the same address ` + fixed +
				`, uses its default (smux): one address listens with one transport`},
		// TLS is read once per listener, from the first export's URL.
		{name: "second service's TLS on the same listener",
			config: "services:\n  - interface: demo.Echo\n    params: {group: b, tls: true, tls.cert: " + cert + ", tls.key: " + key + "}\n",
			want:   `serve: service b/demo.Echo: URL key "tls" is "true", but demo.Echo, exported first on the same address, uses its default (false): `},
		{"second service's key for a method it lacks", "services:\n  - interface: demo.Echo\n    params: {group: b, Slep.timeout: 100ms}\n",
			`URL key "Slep.timeout" sets timeout for method Slep, but service b/demo.Echo has no method Slep (methods: Echo, Fail, Info, Payload, Sleep); did you mean "Sleep"?`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "plugins.yaml")
			if err := os.WriteFile(cfg, []byte(tc.config), 0o644); err != nil {
				t.Fatal(err)
			}
			reg := filepath.Join(dir, "reg")
			r := runCommand(t, 20*time.Second, []string{"XDG_RUNTIME_DIR=" + dir}, "serve", "--config", cfg, "--listen", orDefault(tc.listen, "127.0.0.1:0"),
				"--registry", "file://"+reg, "--shutdown-wait", "5s", "--shutdown-timeout", "10s")
			if r.code != 1 || !strings.HasPrefix(r.stderr, "airnode: ") || !strings.Contains(r.stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit 1 and %q", r.code, r.stderr, tc.want)
			}
			for _, never := range []string{"msg=listening", "msg=exported", "airnode serve: serving", "unregistered"} {
				if strings.Contains(r.stderr, never) {
					t.Errorf("stderr has %q before the error:\n%s", never, r.stderr)
				}
			}
			checkFailedFast(t, r, reg)
		})
	}
}

// serve -p token=true is Dubbo's token=true on the provider, as Export
// takes it from Go: serve builds the provider's filters (not the
// consumer's, which refuse token=true), publishes a random token, and a
// consumer that finds the provider through the registry sends it; a
// direct call without it is refused.
// The log shows it as token=*** (tester7 item 8); the registry entry holds it.
func TestServeTokenTruePublishesARandomToken(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir, "-p", "token=true")
	entries, _ := filepath.Glob(filepath.Join(dir, "demo.Echo", "providers", "*"))
	var m []string
	for _, e := range entries {
		if b, err := os.ReadFile(e); err == nil {
			m = regexp.MustCompile(`[?&]token=([0-9a-f]{32})(&|$)`).FindStringSubmatch(strings.TrimSpace(string(b)))
		}
	}
	if m == nil {
		t.Fatalf("the registry entry %v publishes no random token", entries)
	}
	if log := p.logText(); strings.Contains(log, m[1]) || !strings.Contains(log, "token=***") {
		t.Errorf("the log shows the random token, or no token=***:\n%s", log)
	}
	expectOK(t, call(t, nil, "--registry", p.reg, "demo.Echo", "Echo", `"with token"`), `"with token"`)
	expectFail(t, call(t, nil, p.url("demo.Echo"), "Echo", "1"), "BAD_REQUEST: token: missing token")
	expectOK(t, call(t, nil, p.url("demo.Echo"), "Echo", "2", "-p", "token="+m[1]), "2")
}

// Two services with the same service key on serve's address (a service
// plugin serving demo.Echo next to the built-in one, two plugins serving
// it, or two services entries alike) fail before the first export, naming both, at once and
// registering nothing (the kernel would refuse the second export only
// after the first was registered, then wait the shutdown wait).
func TestServeRefusesADuplicateService(t *testing.T) {
	echo := buildPlugin(t, "github.com/airnode/airnode/cli/testdata/echoplugin")
	for _, tc := range []struct {
		name, config string
		want         []string
	}{
		{"plugin next to the built-in", "plugins:\n  - {name: echo2, point: service, command: " + echo + "}\n",
			[]string{"serve: service demo.Echo is exported twice on 127.0.0.1:0: by the built-in demo.Echo and by service plugin \"echo2\""}},
		{"two plugins", "plugins:\n  - {name: echo2, point: service, command: " + echo + "}\n  - {name: echo3, point: service, command: " + echo + "}\n",
			[]string{`serve: service demo.Echo is provided by two service plugins, "echo2" and "echo3": keep one of them in `}},
		{"two services entries", "services:\n  - interface: demo.Echo\n    params: {group: g}\n  - interface: demo.Echo\n    params: {group: g, weight: 5}\n",
			[]string{`key "services[1]": service "g/demo.Echo" already exported by services[0]`}}, // config.Load's check
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "plugins.yaml")
			if err := os.WriteFile(cfg, []byte(tc.config), 0o644); err != nil {
				t.Fatal(err)
			}
			reg := filepath.Join(dir, "reg")
			r := runCommand(t, 20*time.Second, []string{"XDG_RUNTIME_DIR=" + dir}, "serve", "--config", cfg, "--listen", "127.0.0.1:0",
				"--registry", "file://"+reg, "--shutdown-wait", "5s")
			if r.code != 1 || !strings.Contains(r.stderr, "\nairnode: ") && !strings.HasPrefix(r.stderr, "airnode: ") {
				t.Fatalf("exit %d, stderr %q; want exit 1 and an error", r.code, r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "serving") || strings.Contains(r.stderr, "msg=exported") {
				t.Errorf("serve exported before failing:\n%s", r.stderr)
			}
			checkFailedFast(t, r, reg)
		})
	}
}

// A second SIGINT (or SIGTERM) while serve shuts down, here draining an
// 8 s call, ends it at once: one line says how many calls it abandons,
// the call's consumer is answered, and serve exits 128 + the signal (130
// for SIGINT, 143 for SIGTERM), as kubectl and docker do.
func TestServeSecondSignalExitsAtOnce(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(signalName(sig), func(t *testing.T) {
			p := serve(t, "127.0.0.1:0", t.TempDir(), "--shutdown-wait", "100ms", "--shutdown-timeout", "20s")
			ref := refer(t, p.url("demo.Echo")+"?timeout=30s")
			if _, err := ref.Invoke(context.Background(), "Echo", 0); err != nil {
				t.Fatal(err)
			}
			called := make(chan error, 1)
			go func() {
				_, err := ref.Invoke(context.Background(), "Sleep", 8000)
				called <- err
			}()
			inv := ref.Providers()[0]
			waitFor(t, "the Sleep call in flight", func() bool { return inv.Stats().Active() == 1 })
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the drain", func() bool { return strings.Contains(p.logText(), "waiting before closing listeners") })
			time.Sleep(300 * time.Millisecond) // past the 100 ms wait: draining the call
			start := time.Now()
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t, 5*time.Second); code != 128+int(sig) {
				t.Errorf("serve exited %d after the second %s; want %d", code, signalName(sig), 128+int(sig))
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("serve took %v to exit after the second signal", d)
			}
			want := "airnode: serve: second " + signalName(sig) + ": exiting now, abandoning 1 call in flight"
			if !strings.Contains(p.logText(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, p.logText())
			}
			select {
			case err := <-called:
				if err == nil {
					t.Error("the abandoned Sleep call succeeded")
				}
			case <-time.After(10 * time.Second):
				t.Error("the abandoned Sleep call was not answered")
			}
		})
	}
}

// checkFailedFast checks that a serve that failed its checks did so well
// inside its 5 s shutdown wait and registered nothing in the file registry
// directory reg.
func checkFailedFast(t *testing.T, r result, reg string) {
	t.Helper()
	if r.elapsed >= 4*time.Second {
		t.Errorf("serve failed after %v: it waited its 5 s shutdown wait", r.elapsed)
	}
	var files []string
	_ = filepath.WalkDir(reg, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if len(files) > 0 {
		t.Errorf("registry holds %v after the failed serve; want nothing registered", files)
	}
}

// On port 0 two transports are no conflict: each gets a listener of its
// own, and both services serve.
func TestServeTwoTransportsOnPortZero(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(cfg, []byte("services:\n  - interface: demo.Echo\n    params: {group: b, transport: tcp}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, "127.0.0.1:0", "file://"+filepath.Join(dir, "reg"), []string{"XDG_RUNTIME_DIR=" + dir}, dir, "--config", cfg, "--shutdown-wait", "0s")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.logText(), "service=b/demo.Echo") {
		if time.Now().After(deadline) {
			t.Fatalf("b/demo.Echo (tcp) not served next to demo.Echo (smux) on port 0:\n%s", p.logText())
		}
		time.Sleep(20 * time.Millisecond)
	}
	expectOK(t, call(t, nil, "airnode://"+p.addr+"/demo.Echo", "Echo", `"smux"`), `"smux"`)
}

// The listener's TLS keys: tls compared as a boolean, the files as given;
// another transport only on a fixed port.
func TestServeListenerKeys(t *testing.T) {
	base := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?tls=true&tls.cert=/c.pem&tls.key=/k.pem")
	for _, tc := range []struct {
		u, want string
	}{
		{"airnode://127.0.0.1:20880/b/demo.Echo?tls=true&tls.cert=/c.pem&tls.key=/k.pem", ""},
		{"airnode://127.0.0.1:20880/b/demo.Echo?tls=1&tls.cert=/c.pem&tls.key=/k.pem", ""},
		{"airnode://127.0.0.1:20880/b/demo.Echo", `URL key "tls" is "false", but demo.Echo, exported first on the same address, uses "true"`},
		{"airnode://127.0.0.1:20880/b/demo.Echo?tls=true&tls.cert=/d.pem&tls.key=/k.pem", `URL key "tls.cert" is "/d.pem", but demo.Echo, exported first on the same address, uses "/c.pem"`},
		{"airnode://127.0.0.1:20880/b/demo.Echo?tls=true&tls.cert=/c.pem&tls.key=/k.pem&tls.ca=/ca.pem", `URL key "tls.ca" is "/ca.pem", but demo.Echo, exported first on the same address, uses its default`},
	} {
		err := sameServerKeys(base, spi.MustParse(tc.u))
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("sameServerKeys(%s) = %v, want %q", tc.u, err, tc.want)
		}
	}
	first := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo")
	if err := sameTransport("transport", first, spi.MustParse("airnode://127.0.0.1:20880/b/demo.Echo?transport=tcp"), "smux", "tcp"); err == nil ||
		!strings.Contains(err.Error(), `URL key "transport" is "tcp", but demo.Echo, exported first on the same address 127.0.0.1:20880, uses its default (smux)`) {
		t.Errorf("tcp after smux on port 20880: %v", err)
	}
	zero := spi.MustParse("airnode://127.0.0.1:0/demo.Echo")
	if err := sameTransport("transport", zero, spi.MustParse("airnode://127.0.0.1:0/b/demo.Echo?transport=tcp"), "smux", "tcp"); err != nil {
		t.Errorf("tcp after smux on port 0: %v, want nil (a listener each)", err)
	}
}

// Tester finding (item 11): a read-only registry plugin (the static
// example: Register answers spi.ErrNotSupported) was refused only after
// "msg=listening". serve refuses it before anything listens, and
// exits at once: its builder says it is read-only (spi.ReadOnlyRegistry,
// forwarded by the sdk), as sdk/README asks of such a registry.
func TestServeRefusesAReadOnlyRegistryBeforeListening(t *testing.T) {
	t.Parallel()
	static := buildPlugin(t, "github.com/airnode/airnode/examples/staticregistry/cmd/staticregistry")
	providers := filepath.Join(t.TempDir(), "providers.txt")
	if err := os.WriteFile(providers, []byte("airnode://127.0.0.1:20001/demo.Echo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, "plugins:\n  - {name: static, point: registry, command: "+static+"}\n")
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "serve", "--config", cfg, "--listen", "127.0.0.1:0",
		"--registry", "static://"+providers, "--shutdown-wait", "5s", "--shutdown-timeout", "10s")
	want := "airnode: serve: --registry static://" + providers + " is a read-only registry: its static extension says it cannot register providers (it lists them for consumers)"
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, stderr %q; want exit 1 and %q", r.code, r.stderr, want)
	}
	for _, never := range []string{"msg=listening", "msg=exported", "airnode serve: serving"} {
		if strings.Contains(r.stderr, never) {
			t.Errorf("stderr has %q before the error:\n%s", never, r.stderr)
		}
	}
	if r.elapsed >= 4*time.Second {
		t.Errorf("serve failed after %v: it waited its 5 s shutdown wait", r.elapsed)
	}
}

// Tester finding (item 11): serve --registry memory:// or direct://
// started as if fine, though no other process can find its providers.
// It warns at start, before listening (a warning: calls by address still
// reach it), and skips the default shutdown wait no consumer would
// benefit from (an explicit one is kept for health probes:
// TestHOps3_MemoryRegistrySkipsOnlyTheDefaultWait).
func TestServeWarnsAboutARegistryNoOtherProcessSees(t *testing.T) {
	t.Parallel()
	for _, reg := range []string{"memory://", "direct://127.0.0.1:1"} {
		p := startServe(t, "127.0.0.1:0", reg, noAirnodeEnv, t.TempDir(), "--shutdown-timeout", "10s")
		log := p.logText()
		warn := strings.Index(log, "this registry publishes to no other process")
		listening := strings.Index(log, "msg=listening")
		if warn < 0 || listening >= 0 && warn > listening {
			t.Errorf("%s: no warning before listening:\n%s", reg, log)
		}
		expectOK(t, call(t, noAirnodeEnv, "airnode://"+p.addr+"/demo.Echo", "Echo", `"direct"`), `"direct"`)
		if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		stopped := time.Now()
		if code := p.wait(t, 15*time.Second); code != 0 {
			t.Errorf("%s: exit %d after SIGINT", reg, code)
		}
		if d := time.Since(stopped); d >= 1500*time.Millisecond {
			t.Errorf("%s: serve took %v to stop: it waited the default shutdown wait for consumers that cannot know of it", reg, d)
		}
		if !strings.Contains(p.logText(), `msg="airnode serve: shutting down" wait=0s`) {
			t.Errorf("%s: shutdown line does not say wait=0s:\n%s", reg, p.logText())
		}
	}
	// A shared registry gets no such warning.
	dir := t.TempDir()
	p := startServe(t, "127.0.0.1:0", "file://"+dir, noAirnodeEnv, dir)
	if strings.Contains(p.logText(), "publishes to no other process") {
		t.Errorf("file registry warned:\n%s", p.logText())
	}
}
