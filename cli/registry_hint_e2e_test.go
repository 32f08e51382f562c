package cli

import (
	"strings"
	"testing"
	"time"
)

// Tester8 finding: `registry ls demo.Echo` said "(0 providers)" with no
// hint that g/demo.Echo:1.0 was registered (call names it as left out).
func TestRegistryLsNamesOtherGroupsAndVersions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	serve(t, "127.0.0.1:0", dir, "-p", "group=g", "-p", "version=1.0")
	code, out, errOut := airnode(t, nil, "registry", "ls", "--registry", "file://"+dir, "demo.Echo")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "demo.Echo  (0 providers)") || !strings.Contains(out, "registered in another group or version: g/demo.Echo:1.0") {
		t.Errorf("registry ls demo.Echo:\n%s", out)
	}
}

// Tester11: with group=* (or a list) call and bench reach every fitting
// group, and registry ls and list --explain must list the same providers
// (they looked up the literal key */demo.Echo and found none).
func TestRegistryLsAndExplainFollowGroupPatterns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := serve(t, "127.0.0.1:0", dir, "-p", "group=a")
	b := serve(t, "127.0.0.1:0", dir, "-p", "group=b")
	reg := "file://" + dir
	code, out, errOut := airnode(t, nil, "registry", "ls", "--registry", reg, "demo.Echo?group=*")
	if code != 0 || !strings.Contains(out, "a/demo.Echo") || !strings.Contains(out, "b/demo.Echo") || !strings.Contains(out, a.addr) || !strings.Contains(out, b.addr) {
		t.Errorf("registry ls 'demo.Echo?group=*': exit %d, stderr %q:\n%s", code, errOut, out)
	}
	code, out, _ = airnode(t, nil, "registry", "ls", "--registry", reg, "demo.Echo?group=b,c")
	if code != 0 || strings.Contains(out, a.addr) || !strings.Contains(out, b.addr) || !strings.Contains(out, "c/demo.Echo  (0 providers)") {
		t.Errorf("registry ls 'demo.Echo?group=b,c':\n%s", out)
	}
	r := runCommand(t, 20*time.Second, []string{"AIRNODE_REGISTRY=" + reg}, "list", "--explain", "demo.Echo?group=*")
	if r.code != 0 || !strings.Contains(r.stdout, "providers  2 in "+reg) {
		t.Errorf("list --explain 'demo.Echo?group=*': exit %d, stderr %q:\n%s", r.code, r.stderr, r.stdout)
	}
}

// Tester8/11: one call against a mistyped file registry path created the
// directory (a consumer watches it), after which registry ls said only
// "(0 providers)". Tester nu41: call no longer creates it; call and ls
// both say it does not exist. An existing empty one: ls says no provider
// of any service is registered there.
func TestRegistryLsHintsAtAMistypedFileRegistry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	reg := "file://" + dir + "/typo-reg"
	r := runCommand(t, 20*time.Second, nil, "call", "--registry", reg, "--timeout", "300ms", "demo.Echo", "Info")
	if r.code != 1 || !strings.Contains(r.stderr, "file registry directory "+dir+"/typo-reg does not exist") {
		t.Fatalf("call through a missing registry directory: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	code, _, errOut := airnode(t, nil, "registry", "ls", "--registry", reg, "demo.Echo")
	if code != 1 || !strings.Contains(errOut, "does not exist") {
		t.Errorf("registry ls: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut := airnode(t, nil, "registry", "ls", "--registry", "file://"+dir, "demo.Echo")
	if code != 0 || !strings.Contains(out, "no provider of any service is registered in file://"+dir+" now") {
		t.Errorf("registry ls of an empty directory: exit %d, stderr %q:\n%s", code, errOut, out)
	}
}
