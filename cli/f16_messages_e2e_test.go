package cli

import (
	"strings"
	"testing"
	"time"
)

// One provider at weight 0: the call fails SERVICE_NOT_FOUND saying "the
// only provider has weight 0", not "all 1 providers" (tester61 #9). Real
// binary: serve -p weight=0 with a file registry, call through it.
func TestCallOfTheOnlyProviderAtWeightZeroSaysSo(t *testing.T) {
	dir := t.TempDir()
	serve(t, "127.0.0.1:0", dir, "-p", "weight=0")
	r := call(t, nil, "--registry", "file://"+dir, "demo.Echo", "Echo", `"x"`)
	if r.code == 0 || !strings.Contains(r.stderr, "SERVICE_NOT_FOUND") || !strings.Contains(r.stderr, ": the only provider has weight 0") || strings.Contains(r.stderr, "all 1 providers") {
		t.Fatalf("call: exit %d, stdout %q, stderr:\n%s\nwant SERVICE_NOT_FOUND ... the only provider has weight 0", r.code, r.stdout, r.stderr)
	}
}

// registry ls of direct:// says why it has no service list and what works
// instead (exit 1); of memory:// it adds to "no services" that memory://
// lives inside one process, so a provider serving under memory:// in
// another process is never seen (exit 0) (tester61 #10).
func TestRegistryLsExplainsDirectAndMemory(t *testing.T) {
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "registry", "ls", "--registry", "direct://127.0.0.1:31511")
	want := "airnode: registry ls: list services of direct://127.0.0.1:31511: registry: operation not supported: direct:// has no service list, it names its provider by address for whatever service is asked: name one, as in `airnode registry ls --registry direct://127.0.0.1:31511 demo.Echo` (registry watch works the same way)\n"
	if r.code != 1 || r.stdout != "" || r.stderr != want {
		t.Errorf("ls direct://: exit %d, stdout %q, stderr %q; want 1 and\n%q", r.code, r.stdout, r.stderr, want)
	}

	serveWith(t, "127.0.0.1:0", "memory://")
	r = runCommand(t, 30*time.Second, noAirnodeEnv, "registry", "ls", "--registry", "memory://")
	want = "no services in memory://\n" + memoryHint + "\n"
	if r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Errorf("ls memory://: exit %d, stdout %q, stderr %q; want 0 and\n%q", r.code, r.stdout, r.stderr, want)
	}
	if !strings.Contains(memoryHint, "memory:// lives inside one process") || !strings.Contains(memoryHint, "never seen") {
		t.Errorf("memoryHint %q does not say memory:// is per process", memoryHint)
	}
}
