package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/file/filetest"
)

// TestAbuse2_F1_MultiDocumentConfigRefused (tester34 finding 1): a
// plugins.yaml with a second YAML document ("---") had every key after
// it silently ignored, a misspelt one included (the registry key was
// dropped and the default registry listed). The file is now refused,
// naming the file and the line of the second "---".
func TestAbuse2_F1_MultiDocumentConfigRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := "file://" + filepath.Join(dir, "reg")
	for _, c := range []struct{ text, line string }{
		{"demo: true\n---\nregistry: \"" + reg + "\"\n", "line 2"},
		{"# head\ndemo: true\n\n---\nregistri: junk\n", "line 4"},
		{"demo: true\n---\n", "line 2"},
	} {
		cfg := filepath.Join(dir, "multi.yaml")
		if err := os.WriteFile(cfg, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		r := runCommand(t, 20*time.Second, noAirnodeEnv, "--config", cfg, "registry", "ls", "--summary")
		expectFail(t, r, "airnode: registry ls: config: "+cfg+": ", c.line, `second YAML document ("---")`)
	}
	// One document, with or without a leading "---", is read as before.
	cfg := filepath.Join(dir, "one.yaml")
	if err := os.WriteFile(cfg, []byte("---\nregistry: \""+reg+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "--config", cfg, "registry", "ls")
	if r.code != 1 || !strings.Contains(r.stderr, filepath.Join(dir, "reg")+" does not exist") {
		t.Errorf("one document after ---: exit %d, stderr %q; want the file's registry used (it does not exist)", r.code, r.stderr)
	}
}

// TestAbuse2_F5F6_JunkInTheRegistryDirectory (tester34 findings 5 and
// 6), through the binary on a real registry directory: a file where a
// service's providers directory belongs made `registry ls` fail for every
// service; hand-written junk entries vanished without a word, a no-port
// entry warned on every call as "side=consumer", an other.Svc URL under
// demo.Echo was taken as a demo.Echo provider, and a directory inside
// providers/ was removed. Now ls lists demo.Echo with its invalid
// entries (exit 0, the stray file named once on stderr), call works and
// warns once per invalid entry, and the directory stays.
func TestAbuse2_F5F6_JunkInTheRegistryDirectory(t *testing.T) {
	t.Parallel()
	regDir := t.TempDir()
	reg := "file://" + regDir
	p := startServe(t, "127.0.0.1:0", reg, noAirnodeEnv, "", "--shutdown-wait", "0s")
	prov := filepath.Join(regDir, "demo.Echo", "providers")
	bad := filetest.JunkEntries(t, prov, "demo.Echo")
	if err := os.MkdirAll(filepath.Join(regDir, "bad.Svc"), 0o755); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(regDir, "bad.Svc", "providers")
	if err := os.WriteFile(stray, []byte("junk\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	r := runCommand(t, 20*time.Second, noAirnodeEnv, "registry", "ls", "--summary", "--registry", reg)
	if want := fmt.Sprintf("demo.Echo  1 (%d invalid)", len(bad)); r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("registry ls --summary: exit %d, stdout %q; want exit 0 and %q", r.code, r.stdout, want)
	}
	if n := strings.Count(r.stderr, "file="+stray+" "); n != 1 || !strings.Contains(r.stderr, "not a directory") {
		t.Errorf("registry ls: stderr names the stray file %d times, want once with why:\n%s", n, r.stderr)
	}

	r = runCommand(t, 20*time.Second, noAirnodeEnv, "registry", "ls", "demo.Echo", "--registry", reg)
	if want := fmt.Sprintf("(1 provider, %d invalid entries)", len(bad)); r.code != 0 || !strings.Contains(r.stdout, want) || !strings.Contains(r.stdout, p.addr) {
		t.Errorf("registry ls demo.Echo: exit %d, stdout %q; want %q and %s", r.code, r.stdout, want, p.addr)
	}
	for _, j := range bad {
		if !strings.Contains(r.stdout, "invalid entry "+j.Path+" (consumers skip it): ") || !strings.Contains(r.stdout, j.Why) {
			t.Errorf("registry ls demo.Echo does not show %s as invalid (%s):\n%s", j.Name, j.Why, r.stdout)
		}
		if j.Addr != "" && strings.Contains(r.stdout, "  "+j.Addr+" ") {
			t.Errorf("registry ls lists %s's %s as a provider:\n%s", j.Name, j.Addr, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "127.0.0.1:0 ") {
		t.Errorf("registry ls lists the no-port entry as a provider:\n%s", r.stdout)
	}

	r = call(t, noAirnodeEnv, "--registry", reg, "demo.Echo", "Echo", `"x"`)
	expectOK(t, r, `"x"`)
	for _, j := range bad {
		if n := strings.Count(r.stderr, "file="+j.Path+" "); n != 1 {
			t.Errorf("call logged %s %d times, want once:\n%s", j.Name, n, r.stderr)
		}
	}
	if strings.Contains(r.stderr, "side=consumer") || strings.Contains(r.stderr, "has no host:port") {
		t.Errorf("call still warns about the no-port entry as a consumer URL:\n%s", r.stderr)
	}
	time.Sleep(time.Second) // the provider's own registry polls in the meantime
	if fi, err := os.Stat(filepath.Join(prov, "hand-dir")); err != nil || !fi.IsDir() {
		t.Errorf("the directory put in providers/ is gone: %v", err)
	}
}

// TestAbuse2_F8_AdvertiseUnresolvableName (tester34 finding 8): serve
// --advertise nosuchif0 published a name that neither is an interface nor
// resolves, with no warning, and consumers failed on DNS. A name the
// resolver says does not exist now stops serve (exit 1, naming the flag
// and the value); where the resolver cannot answer at all, serve warns
// and goes on.
func TestAbuse2_F8_AdvertiseUnresolvableName(t *testing.T) {
	t.Parallel()
	const name = "nosuchif0.invalid" // RFC 6761: never resolves
	regDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	_, lerr := net.DefaultResolver.LookupHost(ctx, name)
	cancel()
	var dnsErr *net.DNSError
	notFound := errors.As(lerr, &dnsErr) && dnsErr.IsNotFound
	if !notFound {
		// No DNS answer here: serve warns and serves.
		p := startServe(t, "127.0.0.1:0", "file://"+regDir, noAirnodeEnv, "", "--advertise", name, "--shutdown-wait", "0s")
		if !strings.Contains(p.logText(), "cannot check the advertised name") {
			t.Errorf("lookup of %s: %v; want serve's warning:\n%s", name, lerr, p.logText())
		}
		return
	}
	start := time.Now()
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "serve", "--listen", "127.0.0.1:0", "--registry", "file://"+regDir, "--advertise", name+":37540")
	expectFail(t, r, "airnode: serve: --advertise "+name+":37540: ", `"`+name+`" is neither an interface of this host`, "no such host")
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("serve took %v to refuse it", el)
	}
	if ents, _ := os.ReadDir(regDir); len(ents) > 0 {
		t.Errorf("serve registered something in %s before refusing: %v", regDir, ents)
	}
	// An interface name and an IP address are published without a lookup.
	startServe(t, "127.0.0.1:0", "file://"+regDir, noAirnodeEnv, "", "--advertise", "lo", "--shutdown-wait", "0s")
}
