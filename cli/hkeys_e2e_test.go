package cli

import (
	"strings"
	"testing"
	"time"
)

// A method-level key naming no method of the service (sleep.timeout, as
// a Dubbo user writes Java's sleep) is warned of alike by call on a direct
// URL, by call through a registry and by list --explain of both, with the
// method meant; on a direct URL a key of an exported name it cannot check
// is named at info level and on list --explain's methods row (tester28
// findings 1 and 2). The real binary against a real serve.
func TestHKeysMethodKeyOfNoMethodDirectAndRegistry(t *testing.T) {
	dir := t.TempDir()
	p := serve(t, "127.0.0.1:0", dir)
	direct := "airnode://" + p.addr + "/demo.Echo"
	const warn = "method-level URL key names no method of the provider (ignored)"
	hint := `has no method sleep: a service's methods are exported Go names (upper-case first letter); did you mean \"Sleep\"?`

	// call, direct: one warning, and the key is not applied (Sleep 400
	// is not cut at 100 ms).
	r := runCommand(t, 20*time.Second, nil, "call", direct+"?sleep.timeout=100", "Sleep", "400")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "400" || strings.Count(r.stderr, warn) != 1 || !strings.Contains(r.stderr, hint) || r.elapsed < 400*time.Millisecond {
		t.Errorf("call direct sleep.timeout: exit %d in %v, stdout %q, stderr %q", r.code, r.elapsed, r.stdout, r.stderr)
	}
	// call through the registry: the same warning, with the provider's methods.
	r = runCommand(t, 20*time.Second, nil, "call", "--registry", "file://"+dir, "demo.Echo?sleep.timeout=100", "Echo", "1")
	if r.code != 0 || strings.Count(r.stderr, warn) != 1 || !strings.Contains(r.stderr, `has no method sleep (methods: Echo, Fail, Info, Payload, Sleep); did you mean \"Sleep\"?`) {
		t.Errorf("call registry sleep.timeout: exit %d, stderr %q", r.code, r.stderr)
	}
	// call, direct, an exported name: not checkable, said at info level only.
	r = runCommand(t, 20*time.Second, nil, "call", direct+"?Nope.timeout=100", "Echo", "1")
	if r.code != 0 || strings.Contains(r.stderr, "Nope") {
		t.Errorf("call direct Nope.timeout: exit %d, stderr %q (want silence at warn level)", r.code, r.stderr)
	}
	r = runCommand(t, 20*time.Second, nil, "call", "--log-level", "info", direct+"?Nope.timeout=100", "Echo", "1")
	if r.code != 0 || !strings.Contains(r.stderr, `level=INFO msg="method-level URL keys not checked against the provider's methods: a direct reference does not learn them; list them in the URL (methods=A,B) to have each key checked" component=kernel service=demo.Echo keys=Nope.timeout`) {
		t.Errorf("call --log-level info direct Nope.timeout: exit %d, stderr %q", r.code, r.stderr)
	}
	// ... and with methods= in the URL it is checked.
	r = runCommand(t, 20*time.Second, nil, "call", direct+"?methods=Echo,Sleep&Nope.timeout=100", "Echo", "1")
	if r.code != 0 || strings.Count(r.stderr, warn) != 1 || !strings.Contains(r.stderr, `has no method Nope (methods: Echo, Sleep)`) {
		t.Errorf("call direct methods=Echo,Sleep&Nope.timeout: exit %d, stderr %q", r.code, r.stderr)
	}

	// list --explain, direct: the key is among those nothing reads, with
	// the same words; foo=1 still gets its own warning.
	r = runCommand(t, 20*time.Second, nil, "list", "--explain", direct+"?sleep.timeout=100&foo=1")
	if r.code != 0 || !strings.Contains(r.stderr, `airnode: list: warning: URL key "sleep.timeout" sets timeout for method sleep, but service demo.Echo has no method sleep: a service's methods are exported Go names (upper-case first letter); did you mean "Sleep"? (the service's methods are not known here; the consumer ignores the key)`+"\n") ||
		!strings.Contains(r.stderr, "airnode: list: warning: foo=1 is not read by airnode") || strings.Count(r.stderr, "sleep.timeout") != 1 {
		t.Errorf("list --explain direct sleep.timeout: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
	r = runCommand(t, 20*time.Second, nil, "list", "--explain", direct+"?Nope.timeout=100")
	if r.code != 0 || !row("methods", "Nope").MatchString(r.stdout) || !row("(not", "checked", "against", "the", "provider's", "methods:", "a", "direct", "URL", "lists", "none", "and", "the", "consumer", "learns", "none", "from", "its", "providers;", "methods=A,B", "in", "the", "URL", "has", "them", "checked)").MatchString(r.stdout) {
		t.Errorf("list --explain direct Nope.timeout: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
	// list --explain through the registry: the provider's methods.
	cfg := writeConfig(t, "registry: file://"+dir+"\n")
	r = runCommand(t, 20*time.Second, nil, "--config", cfg, "list", "--explain", "demo.Echo?sleep.timeout=100")
	if r.code != 0 || !strings.Contains(r.stderr, `airnode: list: warning: URL key "sleep.timeout" sets timeout for method sleep, but service demo.Echo has no method sleep (methods: Echo, Fail, Info, Payload, Sleep); did you mean "Sleep"? (provider `+p.addr+"'s methods; the consumer ignores the key)\n") {
		t.Errorf("list --explain registry sleep.timeout: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}
}
