package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Tester finding (item 11): `airnode stats ADDR --timeout 0` (or -1s) was
// accepted and failed at once with the hint meant for a wrong address.
// A non-positive timeout is refused, naming it, before any request: a
// usage error, exit 2 (fix-p).
func TestStatsRefusesNonPositiveTimeout(t *testing.T) {
	for _, v := range []string{"0", "-1s"} {
		code, out, errOut := airnode(t, nil, "stats", "127.0.0.1:1", "--timeout", v)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "stats: --timeout ") ||
			!strings.Contains(errOut, "want a positive duration") || strings.Contains(errOut, "serve --metrics") {
			t.Errorf("--timeout %s: exit %d, stdout %q, stderr %q", v, code, out, errOut)
		}
	}
}

// Tester finding (item 11): `registry ls --registry file:///typo` printed
// "no services" and exited 0. A file registry directory named in the URL
// that does not exist is an error naming it (exit 1), and ls does not
// create it; an existing empty one still lists no services.
func TestRegistryLsMissingFileDirectory(t *testing.T) {
	base := t.TempDir()
	missing := filepath.Join(base, "nonexist")
	code, out, errOut := airnode(t, nil, "registry", "ls", "--registry", "file://"+missing)
	if code != 1 || out != "" || !strings.Contains(errOut, "airnode: registry ls: file registry directory "+missing+" does not exist") {
		t.Errorf("missing directory: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = airnode(t, nil, "registry", "ls", "--registry", "file://"+missing, "demo.Echo")
	if code != 1 || !strings.Contains(errOut, "does not exist") {
		t.Errorf("missing directory, one service: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("registry ls created %s (%v)", missing, err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut = airnode(t, nil, "registry", "ls", "--registry", "file://"+file); code != 1 || !strings.Contains(errOut, "is not a directory") {
		t.Errorf("a file: exit %d, stderr %q", code, errOut)
	}
	code, out, errOut = airnode(t, nil, "registry", "ls", "--registry", "file://"+base)
	if code != 0 || out != "no services in file://"+base+"\n" {
		t.Errorf("existing empty directory: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
