package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDY_SchemeWithoutSlashesIsAUsageError (tester104 #1): a SERVICE_URL
// with one slash after its scheme, airnode:/127.0.0.1:PORT/demo.Echo, was
// read as a service key (group "airnode:", interface "127.0.0.1") and the
// call waited and failed SERVICE_NOT_FOUND, exit 1. Every command taking a
// SERVICE_URL now refuses it at once, exit 2, with the URL meant, and that
// URL calls the provider. The real binary and a real serve.
func TestDY_SchemeWithoutSlashesIsAUsageError(t *testing.T) {
	t.Parallel()
	p := serve(t, "127.0.0.1:0", t.TempDir())
	oneSlash := "airnode:/" + p.addr + "/demo.Echo"
	meant := "did you mean " + p.url("demo.Echo")
	for _, c := range []struct {
		args   []string
		prefix string
		has    string
	}{
		{[]string{"call", oneSlash, "Echo", `"x"`}, "airnode: call: ", meant},
		{[]string{"call", "airnode:" + p.addr + "/demo.Echo?timeout=2s", "Echo", `"x"`}, "airnode: call: ", meant + "?timeout=2s"},
		{[]string{"call", "airnode:demo.Echo", "Echo", `"x"`}, "airnode: call: ", "did you mean airnode:///demo.Echo"},
		{[]string{"call", "zookeeper:/127.0.0.1:2181/demo.Echo", "Echo", `"x"`}, "airnode: call: ", "did you mean zookeeper://127.0.0.1:2181/demo.Echo"},
		{[]string{"call", oneSlash + "/Echo", "Echo"}, "airnode: call: ", meant + "/Echo"},
		{[]string{"bench", "-n", "1", oneSlash}, "airnode: bench: ", meant},
		{[]string{"list", "--explain", oneSlash}, "airnode: list --explain: ", meant},
		{[]string{"registry", "ls", "--registry", "memory://", oneSlash}, "airnode: registry ls: ", meant},
	} {
		r := runCommand(t, 30*time.Second, noAirnodeEnv, c.args[0], c.args[1:]...)
		want := `service URL "` + c.args[len(c.args)-1]
		if c.args[0] == "call" {
			want = `service URL "` + c.args[1]
		}
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, c.prefix+want) || !strings.Contains(r.stderr, c.has) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
			t.Errorf("airnode %s: exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q with %q", strings.Join(c.args, " "), r.code, r.stdout, r.stderr, c.prefix+want, c.has)
		}
		if r.elapsed > 5*time.Second {
			t.Errorf("airnode %s took %v; want a usage error before anything waits", strings.Join(c.args, " "), r.elapsed)
		}
	}
	expectOK(t, call(t, noAirnodeEnv, p.url("demo.Echo"), "Echo", `"x"`), `"x"`)
}

// TestDY_SerializationWarningSaysTheCodecsNeedNotAgree (tester104 #2): the
// warning of Dubbo's serialization key said both sides' codecs must
// agree; a provider answers in the codec each request names, so a json
// consumer calls a msgpack provider. The real binary against a real serve.
func TestDY_SerializationWarningSaysTheCodecsNeedNotAgree(t *testing.T) {
	t.Parallel()
	p := serve(t, "127.0.0.1:0", t.TempDir(), "-p", "codec=msgpack")
	r := call(t, noAirnodeEnv, p.url("demo.Echo")+"?serialization=hessian2", "Echo", `"x"`, "--codec", "json")
	if r.code != 0 || strings.TrimSpace(r.stdout) != `"x"` {
		t.Fatalf("call --codec json of a msgpack provider: exit %d, stdout %q, stderr %q; want exit 0 and \"x\"", r.code, r.stdout, r.stderr)
	}
	const want = "the codec key chooses the serialization (codec=msgpack, json or protobuf): the consumer's codec encodes its requests, and the provider answers in the codec each request names, so the two sides need not agree"
	if !strings.Contains(r.stderr, "key=serialization") || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "must agree") {
		t.Errorf("stderr %q; want the warning of key serialization with %q and no \"must agree\"", r.stderr, want)
	}
	// list --explain words it as a line of its own, with the same text
	r = runCommand(t, 20*time.Second, noAirnodeEnv, "list", "--explain", p.url("demo.Echo")+"?serialization=hessian2")
	if !strings.Contains(r.stderr, "serialization=hessian2 has no effect: it is a Dubbo key airnode does not implement; "+want) {
		t.Errorf("list --explain: exit %d, stderr %q; want the warning with %q", r.code, r.stderr, want)
	}
}

// TestDY_UnreadableConfigHasNoYAMLNote (tester104 #3): a configuration
// file that cannot be read (permission denied, here for uid 65534 since
// the tests run as root; a directory) said the file is read as YAML, a
// note that belongs to files that do not parse. A file that does not
// parse keeps it. The real binary.
func TestDY_UnreadableConfigHasNoYAMLNote(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Fatalf("this test runs list as uid 65534 and needs root (as CI runs it); uid is %d", os.Getuid())
	}
	const note = "the configuration file is read as YAML"
	base, err := os.MkdirTemp("", "airnode-dy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	b, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	bin, noread, bad, dir := filepath.Join(base, "airnode"), filepath.Join(base, "noread.yaml"), filepath.Join(base, "bad.yaml"), filepath.Join(base, "dir.yaml")
	for _, err := range []error{
		os.Chmod(base, 0o755),
		os.WriteFile(bin, b, 0o755),
		os.WriteFile(noread, []byte("listen: 127.0.0.1:1\n"), 0o600), // root's alone
		os.WriteFile(bad, []byte("listen: [\n"), 0o644),
		os.Mkdir(dir, 0o755),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "list", "--config", noread)
	cmd.Env = append(hostEnviron(), append([]string{"HOME=" + base, "XDG_RUNTIME_DIR=", "XDG_CACHE_HOME=" + base}, noAirnodeEnv...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	if want := "airnode: list: config: " + noread + ": open " + noread + ": permission denied\n"; exitCode(t, err) != 1 || stderr.String() != want {
		t.Errorf("list --config %s as uid 65534: %v, stderr %q; want exit 1 and %q", noread, err, stderr.String(), want)
	}
	r := runCommand(t, 20*time.Second, noAirnodeEnv, "list", "--config", dir)
	if want := "airnode: list: config: " + dir + ": read " + dir + ": is a directory\n"; r.code != 1 || r.stderr != want {
		t.Errorf("list --config %s: exit %d, stderr %q; want exit 1 and %q", dir, r.code, r.stderr, want)
	}
	r = runCommand(t, 20*time.Second, noAirnodeEnv, "list", "--config", bad)
	if r.code != 1 || !strings.Contains(r.stderr, "yaml: ") || !strings.Contains(r.stderr, note) {
		t.Errorf("list --config %s: exit %d, stderr %q; want exit 1, the YAML error and %q", bad, r.code, r.stderr, note)
	}
}

// TestDY_ServiceKeyFormsAreNotTakenForSchemes: schemeWithoutSlashes leaves
// every service key form README names, and one whose interface or group
// reads as a scheme, to parseServiceKey.
func TestDY_ServiceKeyFormsAreNotTakenForSchemes(t *testing.T) {
	for _, s := range []string{
		"demo.Echo", "demo.Echo:1.0", "g/demo.Echo:1.0", "g/demo.Echo", "demo.Echo?group=g&version=1.0",
		"com.acme.EchoService:2.0.1", "dev.v2/demo.Echo:1.0", "demo.Echo?note=airnode:/x", "Echo:1.0",
		"airnode:///demo.Echo", "airnode://127.0.0.1:20880/demo.Echo",
	} {
		if err := schemeWithoutSlashes(s); err != nil {
			t.Errorf("schemeWithoutSlashes(%q) = %v; want nil", s, err)
		}
		if _, err := parseServiceKey(s); err != nil {
			t.Errorf("parseServiceKey(%q) = %v; want it parsed", s, err)
		}
	}
}
