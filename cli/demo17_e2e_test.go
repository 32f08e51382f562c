package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Tester17 finding 3: serve always exported demo.Echo. --demo=false, the
// file's "demo: false" and AIRNODE_DEMO=false leave it out (a call to it
// is SERVICE_NOT_FOUND, the services of the configuration are served);
// with nothing else to export serve refuses to start; the default still
// exports it.
func TestServeDemoFalseLeavesDemoEchoOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plugin := "plugins:\n  - {name: greeter, point: service, command: " + greeter + "}\n"
	withPlugin := filepath.Join(dir, "plugins.yaml")
	if err := os.WriteFile(withPlugin, []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	fileOff := filepath.Join(dir, "off.yaml")
	if err := os.WriteFile(fileOff, []byte("demo: false\n"+plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"flag", nil, []string{"--config", withPlugin, "--demo=false"}},
		{"file", nil, []string{"--config", fileOff}},
		{"environment", []string{"AIRNODE_DEMO=false"}, []string{"--config", withPlugin}},
	} {
		reg := t.TempDir()
		p := startServe(t, "127.0.0.1:0", "file://"+reg, append([]string{"XDG_RUNTIME_DIR=" + reg}, tc.env...), "", tc.args...)
		expectOK(t, call(t, nil, p.url("greeter.Greeter"), "Hello", `"Ann"`), `"Hello, Ann"`)
		expectFail(t, call(t, nil, p.url("demo.Echo"), "Echo", "1"), "SERVICE_NOT_FOUND", "demo.Echo")
		if strings.Contains(p.logText(), "service=demo.Echo") {
			t.Errorf("%s: serve exported demo.Echo:\n%s", tc.name, p.logText())
		}
	}

	r := runCommand(t, 20*time.Second, append([]string{"XDG_RUNTIME_DIR=" + dir}, noAirnodeEnv...), "serve",
		"--listen", "127.0.0.1:0", "--registry", "memory://", "--demo=false")
	if r.code != 1 || !strings.Contains(r.stderr, "serve: nothing to export: demo is false") {
		t.Errorf("serve --demo=false with no service: exit %d, stderr %q; want exit 1 saying there is nothing to export", r.code, r.stderr)
	}

	p := serve(t, "127.0.0.1:0", t.TempDir())
	expectOK(t, call(t, nil, p.url("demo.Echo"), "Echo", `"still on"`), `"still on"`)
	expectFail(t, call(t, nil, p.url("demo.Echo"), "Sleep", "60001"), "BAD_REQUEST", "want 0 to 60000 ms")
}

// Tester17 finding 10: /metrics and /stats have no authentication, so a
// --metrics address other hosts can reach is logged at Warn; a loopback
// one is not. (The unspecified address is judged without binding it: the
// tests listen on loopback only.)
func TestServeMetricsOffLoopbackWarns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9090}, true},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 9090}, true},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 9090}, false},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 9090}, false},
		{&net.TCPAddr{IP: net.IPv4(10, 0, 0, 5), Port: 9090}, false},
		{&net.UnixAddr{Name: "/tmp/x", Net: "unix"}, false},
	} {
		if got := loopbackAddr(tc.addr); got != tc.want {
			t.Errorf("loopbackAddr(%v) = %v, want %v", tc.addr, got, tc.want)
		}
	}
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--metrics", "127.0.0.1:0")
	if strings.Contains(p.logText(), "no authentication") {
		t.Errorf("a loopback --metrics address was warned about:\n%s", p.logText())
	}
}
