package file_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/spi"
)

// TestUnreadableNamesWhatServicesSkipped (tester49 finding 7): what a read
// skipped because it could not read it is reported by Unreadable (registry
// ls counts it instead of printing "no services"), and forgotten once a
// later read of the same directory succeeds. As root no file is
// unreadable by mode, so a file where a service's providers directory
// belongs stands in for it (ENOTDIR, skipped the same way as EACCES); the
// cli e2e test TestLsCountsUnreadableEntries runs ls as another user.
func TestUnreadableNamesWhatServicesSkipped(t *testing.T) {
	r, regDir, _ := loggedRegistry(t, "", spi.MustParse("airnode://127.0.0.1:37524/demo.Echo?side=provider"))
	ur := r.(interface{ Unreadable() []file.Invalid })
	if bad := ur.Unreadable(); len(bad) != 0 {
		t.Fatalf("before any read: Unreadable %v, want none", bad)
	}
	stray := filepath.Join(regDir, "bad.Svc", "providers")
	if err := os.MkdirAll(filepath.Dir(stray), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stray, []byte("junk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 { // read twice: counted once
		if keys, err := r.Services(context.Background()); err != nil || len(keys) != 1 {
			t.Fatalf("Services: %v, %v; want [demo.Echo]", keys, err)
		}
	}
	bad := ur.Unreadable()
	if len(bad) != 1 || bad[0].Path != stray || !strings.Contains(bad[0].Why, "not a directory") {
		t.Fatalf("Unreadable %+v; want the one stray file %s, not a directory", bad, stray)
	}
	if err := os.Remove(stray); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Services(context.Background()); err != nil {
		t.Fatal(err)
	}
	if bad := ur.Unreadable(); len(bad) != 0 {
		t.Errorf("after the stray file was removed and the registry read again: Unreadable %+v, want none", bad)
	}
}
