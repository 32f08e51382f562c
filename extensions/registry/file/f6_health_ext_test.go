package file_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// TestF6_UnpublishedEntryIsAHealthWarning (tester nu53 finding 1): a
// provider whose entry the keeper cannot re-create (a directory made
// where it belongs) logged a Warn, but Health said nothing, so airnode
// serve kept /stats warnings [] and airnode_health_warning{check=
// "registry"} 0 while consumers no longer found it. Health names the
// service, the path and why while the entry is missing, stays so across
// the keeper's retries, and is nil once the entry is back; a consumer's
// registry (no provider entry) and an unregistered provider have none.
func TestF6_UnpublishedEntryIsAHealthWarning(t *testing.T) {
	dir := t.TempDir()
	var log logbuf.Buffer
	r := buildLogged(t, "file://"+dir+"?poll=100ms", &log)
	u := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?category=providers&side=provider")
	if err := r.Register(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if err := r.Health(); err != nil {
		t.Fatalf("Health of a registered provider: %v; want nil", err)
	}
	consumer := buildLogged(t, "file://"+dir+"?poll=100ms", &log)
	if err := consumer.Register(context.Background(), spi.MustParse("airnode://127.0.0.1/demo.Echo?category=consumers&side=consumer")); err != nil {
		t.Fatal(err)
	}

	entries, err := filepath.Glob(filepath.Join(dir, "demo.Echo", "providers", "*"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("provider entries %v (%v): want 1", entries, err)
	}
	path := entries[0]
	waitFor(t, "rm entry; mkdir entry", 5*time.Second, func() bool {
		_ = os.Remove(path)
		return os.Mkdir(path, 0o755) == nil // the keeper may re-create it in between
	})
	waitFor(t, "Health reports the entry", 5*time.Second, func() bool { return r.Health() != nil })
	herr := r.Health()
	t.Logf("Health: %v", herr)
	if msg := herr.Error(); !strings.Contains(msg, "demo.Echo") || !strings.Contains(msg, path) || !strings.Contains(msg, "not in the registry") {
		t.Errorf("Health %q: want it to name demo.Echo, the path %s, and say it is not in the registry", msg, path)
	}
	for range 50 { // 5 polls of retries: still reported
		if r.Health() == nil {
			t.Fatal("Health went nil while the entry still cannot be re-created")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := consumer.Health(); err != nil {
		t.Errorf("a consumer's registry: Health %v; want nil", err)
	}

	if err := os.Remove(path); err != nil { // rmdir
		t.Fatal(err)
	}
	waitFor(t, "entry back and Health nil", 5*time.Second, func() bool {
		st, err := os.Stat(path)
		return err == nil && st.Mode().IsRegular() && r.Health() == nil
	})
	if !strings.Contains(log.String(), "entry re-created") {
		t.Errorf("no Info that the entry is re-created:\n%s", log.String())
	}

	// A provider unregistered while its entry cannot be re-created has
	// no warning: it is not meant to be there.
	waitFor(t, "rm entry; mkdir entry", 5*time.Second, func() bool {
		_ = os.Remove(path)
		return os.Mkdir(path, 0o755) == nil
	})
	waitFor(t, "Health reports the entry", 5*time.Second, func() bool { return r.Health() != nil })
	if err := r.Unregister(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if err := r.Health(); err != nil {
		t.Errorf("Health after Unregister: %v; want nil", err)
	}
}
