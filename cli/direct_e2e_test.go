package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	fileregistry "github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// deadZooKeeper is a registry URL with nothing listening: a reference that
// used it would wait for its first provider list until Refer's 10 s bound.
const deadZooKeeper = "zookeeper://127.0.0.1:1"

// New-user test, item 1: a SERVICE_URL with host:port is a direct call for
// call and bench, whatever registry the configuration file, AIRNODE_REGISTRY
// or --registry names (Dubbo: a reference's url bypasses the registry).
// Only an explicit --registry gets a line on stderr saying it is not used.
func TestCLI_DirectAddressBypassesRegistry(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	zkConfig := writeConfig(t, "registry: \""+deadZooKeeper+"\"\n")
	emptyReg := "file://" + t.TempDir()
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		note string // the stderr line, "" for none
	}{
		{"config file registry", nil, []string{"--config", zkConfig}, ""},
		{"AIRNODE_REGISTRY", []string{"AIRNODE_REGISTRY=" + deadZooKeeper}, nil, ""},
		{"--registry dead zookeeper", nil, []string{"--registry", deadZooKeeper}, "--registry " + deadZooKeeper},
		{"--registry empty file", nil, []string{"--registry", emptyReg}, "--registry " + emptyReg},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantNote := ""
			if tc.note != "" {
				wantNote = "airnode: call: warning: " + tc.note + " not used: " + p.url("demo.Echo") + " names its provider (a direct call)\n"
			}
			r := call(t, tc.env, append(tc.args, p.url("demo.Echo"), "Echo", `"hello"`)...)
			if r.code != 0 || strings.TrimSpace(r.stdout) != `"hello"` || r.stderr != wantNote {
				t.Fatalf("call: exit %d after %v, stdout %q, stderr %q; want \"hello\" and stderr %q", r.code, r.elapsed, r.stdout, r.stderr, wantNote)
			}
			if r.elapsed > 5*time.Second {
				t.Errorf("call took %v: did it wait for the registry?", r.elapsed)
			}
			b := runCommand(t, 60*time.Second, tc.env, "bench", append(tc.args, p.url("demo.Echo"), "-n", "50", "--json")...)
			wantNote = strings.Replace(wantNote, "airnode: call: ", "airnode: bench: ", 1)
			var rep struct{ Calls, OK int64 }
			if err := json.Unmarshal([]byte(b.stdout), &rep); b.code != 0 || err != nil || rep.OK != 50 || b.stderr != wantNote {
				t.Fatalf("bench: exit %d after %v, stdout %q, stderr %q; want 50 calls and stderr %q", b.code, b.elapsed, b.stdout, b.stderr, wantNote)
			}
		})
	}
}

// New-user test, item 1: a host without a port is refused with the URL and
// what is allowed, by call and bench, instead of silently using the
// registry (which answered from some local provider).
func TestCLI_HostWithoutPortRefused(t *testing.T) {
	runtime := t.TempDir()
	regDir := filepath.Join(runtime, "airnode", "registry") // the default file registry's location
	if err := os.MkdirAll(regDir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := serve(t, "127.0.0.1:0", regDir) // a provider the default registry finds
	env := []string{"XDG_RUNTIME_DIR=" + runtime}
	const target = "airnode://10.99.99.99/demo.Echo"
	want := `SERVICE_URL "` + target + `": host "10.99.99.99" has no port: give host:port for a direct call (airnode://10.99.99.99:20880/demo.Echo), or no host to use the registry (demo.Echo)`
	// SERVICE_URL of the wrong form: a usage error, exit 2 (fix-p)
	expectUsage(t, call(t, env, target, "Info"), "airnode: call: "+want)
	expectUsage(t, call(t, env, "airnode://"+p.addr+",127.0.0.1/demo.Echo", "Info"), "airnode: call: ", `host "127.0.0.1" has no port`)
	b := runCommand(t, 60*time.Second, env, "bench", target, "-n", "10")
	if b.code != exitUsage || b.stdout != "" || b.stderr != "airnode: bench: "+want+"\n" {
		t.Fatalf("bench %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", target, b.code, b.stdout, b.stderr, want)
	}
	// the registry is still used when the URL names no host
	expectOK(t, call(t, env, "airnode:///demo.Echo", "Echo", `"via registry"`), `"via registry"`)
}

// referRegistry's choices without processes: hosts go direct, every host
// needs a port, no host takes --registry, the configuration's, or "file".
func TestReferRegistry(t *testing.T) {
	cat := bundle.Catalogs()
	for _, tc := range []struct {
		url, registry string
		explicit      bool
		want, errPart string
		note          bool
	}{
		{url: "airnode://127.0.0.1:20880/demo.Echo", registry: deadZooKeeper, want: ""},
		{url: "airnode://127.0.0.1:20880/demo.Echo", registry: deadZooKeeper, explicit: true, want: "", note: true},
		{url: "airnode://127.0.0.1:20880,[::1]:20881/demo.Echo", want: ""},
		{url: "airnode://127.0.0.1:20880,[::1]/demo.Echo", errPart: `host "::1" has no port: give host:port for a direct call (airnode://[::1]:20880/demo.Echo)`},
		{url: "airnode://10.99.99.99/g/demo.Echo?version=1.0", errPart: "or no host to use the registry (g/demo.Echo:1.0)"},
		{url: "airnode:///demo.Echo", registry: deadZooKeeper, want: deadZooKeeper},
		{url: "airnode:///demo.Echo", want: "file://" + fileregistry.DefaultDir()}, // the directory made explicit, for messages
		{url: "airnode:///demo.Echo", registry: "file://", want: "file://" + fileregistry.DefaultDir()},
	} {
		var stderr bytes.Buffer
		u := spi.MustParse(tc.url)
		reg, err := referRegistry(cat, tc.registry, tc.explicit, u, tc.url, "call", &stderr, "text")
		switch {
		case tc.errPart != "":
			if err == nil || !strings.Contains(err.Error(), tc.errPart) {
				t.Errorf("%s: error %v, want one containing %q", tc.url, err, tc.errPart)
			}
		case err != nil || reg.String() != tc.want:
			t.Errorf("%s, registry %q: %q, %v; want %q", tc.url, tc.registry, reg, err, tc.want)
		case (stderr.Len() > 0) != tc.note:
			t.Errorf("%s, registry %q explicit %v: stderr %q", tc.url, tc.registry, tc.explicit, stderr.String())
		}
	}
}

// New-user test, item 2: bench's --timeout takes what call's --timeout and
// the URL key take, a bare number of milliseconds included, and sets the
// key to the text given.
func TestCLI_BenchTimeoutBareMilliseconds(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	r := benchJSON(t, nil, p.url("demo.Echo"), "--timeout", "500", "-n", "20")
	if r.OK != 20 {
		t.Fatalf("bench --timeout 500: %d of 20 calls succeeded", r.OK)
	}
	b := benchResult(t, p.url("demo.Echo"), "--timeout", "5 s", "-n", "20")
	if want := "airnode: bench: --timeout \"5 s\": want a duration such as 500ms, 1.5s or 3000 (ms)\n"; b.code != exitUsage || b.stderr != want {
		t.Fatalf("bench --timeout '5 s': exit %d, stderr %q; want %q", b.code, b.stderr, want)
	}
	for _, tc := range []struct {
		flag, param string
	}{{"500", ""}, {"500", "500ms"}, {"0.5s", "500"}} {
		var ps []string
		if tc.param != "" {
			ps = []string{"timeout=" + tc.param}
		}
		u, err := consumerURL(config.Config{}, "demo.Echo", ps, []flagParam{{"--timeout", tc.flag, "timeout", tc.flag}})
		if err != nil {
			t.Fatalf("--timeout %s -p timeout=%s: %v", tc.flag, tc.param, err)
		}
		if d, err := u.Duration("timeout", 0); err != nil || d != 500*time.Millisecond {
			t.Errorf("--timeout %s -p timeout=%s: %s gives %v, %v; want 500ms", tc.flag, tc.param, u, d, err)
		}
	}
}

// New-user test, item 3: bench --json prints one JSON object on stdout even
// when the run fails before measuring (here: nothing listens; a bad flag
// value), with the error and calls 0, and exits 1 (2 for a usage error).
func TestCLI_BenchJSONOnFailure(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"airnode://127.0.0.1:1/demo.Echo", "-n", "10"}, "connection refused"},
		{[]string{"airnode://127.0.0.1:1/demo.Echo", "--timeout", "soon"}, `--timeout "soon"`},
		{[]string{"airnode://127.0.0.1/demo.Echo"}, "has no port"},
	} {
		b := benchResult(t, append(tc.args, "--json")...)
		var got map[string]any
		if err := json.Unmarshal([]byte(b.stdout), &got); err != nil {
			t.Fatalf("bench %v --json: stdout %q is not one JSON object: %v", tc.args, b.stdout, err)
		}
		msg, _ := got["error"].(string)
		want := 1
		if strings.Contains(tc.want, "--timeout") || strings.Contains(tc.want, "no port") {
			want = exitUsage // a flag value or SERVICE_URL of the wrong form (tester nu41, fix-p)
		}
		if b.code != want || got["calls"] != float64(0) || !strings.Contains(msg, tc.want) ||
			b.stderr != "airnode: "+msg+"\n" {
			t.Errorf("bench %v --json: exit %d, stdout %s, stderr %q; want exit 1 (2 for --timeout and no port), calls 0 and the error containing %q on both", tc.args, b.code, b.stdout, b.stderr, tc.want)
		}
	}
}

// New-user test, item 4: a key in SERVICE_URL's query that --timeout (or
// -p, or bench's --connections) sets to another value is refused naming
// both, as -p against a flag is; the same duration spelled another way is
// accepted.
func TestCLI_URLQueryConflictingWithFlagRefused(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir())
	u := p.url("demo.Echo") + "?timeout=200"
	expectExit(t, call(t, nil, u, "--timeout", "1000", "Sleep", "500"), 2,
		`airnode: call: timeout=200 in "`+u+`" conflicts with --timeout 1000 (which sets timeout=1000): give one of them`)
	expectExit(t, call(t, nil, u, "-p", "timeout=1000", "Sleep", "500"), 2,
		`airnode: call: timeout=200 in "`+u+`" conflicts with -p timeout=1000: give one of them`)
	expectExit(t, call(t, nil, "g/demo.Echo:1.0", "-p", "version=2.0", "Info"), 2,
		`airnode: call: version=1.0 in "g/demo.Echo:1.0" conflicts with -p version=2.0: give one of them`)
	// the same timeout both ways, in another spelling: accepted, and it is
	// the timeout the call gets
	expectOK(t, call(t, nil, p.url("demo.Echo")+"?timeout=1s", "--timeout", "1000", "Sleep", "100"), "100")
	expectFail(t, call(t, nil, p.url("demo.Echo")+"?timeout=0.2s", "--timeout", "200", "Sleep", "500"), "SERVER_TIMEOUT")

	b := benchResult(t, p.url("demo.Echo")+"?connections=2", "--connections", "4", "-n", "10")
	if want := `airnode: bench: connections=2 in "` + p.url("demo.Echo") + `?connections=2" conflicts with --connections 4 (which sets connections=4): give one of them`; b.code != 2 || !strings.HasPrefix(b.stderr, want) {
		t.Errorf("bench ?connections=2 --connections 4: exit %d, stderr %q; want %q", b.code, b.stderr, want)
	}
}
