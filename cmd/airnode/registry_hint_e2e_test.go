package main

import (
	"strings"
	"testing"
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
