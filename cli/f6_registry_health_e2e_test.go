package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// F6 (tester nu53 finding 1): a provider whose file-registry entry
// cannot be re-created (a directory made where it belongs) logged a
// Warn, while /ready stayed 200, /stats listed no warning and
// airnode_health_warning{check="registry"} stayed 0, though consumers no
// longer found it. The real binary: the warning is raised with the
// entry's path while it cannot be put back, /ready stays 200 (a
// warning, not a 503), `airnode stats` prints it, and it clears once the
// entry is back.
func TestF6_UnpublishedFileEntryIsARegistryWarning(t *testing.T) {
	t.Parallel()
	regDir := t.TempDir()
	p := serve(t, "127.0.0.1:0", regDir, "--metrics", "127.0.0.1:0", "--shutdown-wait", "0s")
	addr := metricsAddr(t, p)
	waitProbe(t, addr, "/ready", http.StatusOK, "serving", 5*time.Second)
	waitProbe(t, addr, "/metrics", http.StatusOK, "airnode_health_warning{check=\"registry\"} 0\n", 5*time.Second)

	entries, err := filepath.Glob(filepath.Join(regDir, "demo.Echo", "providers", "*"))
	if err != nil || len(entries) != 1 {
		t.Fatalf("provider entries %v (%v): want 1", entries, err)
	}
	path := entries[0]
	waitFor(t, "rm entry; mkdir entry", func() bool {
		_ = os.Remove(path)
		return os.Mkdir(path, 0o755) == nil // the keeper may put it back in between
	})
	start := time.Now()
	waitProbe(t, addr, "/metrics", http.StatusOK, "airnode_health_warning{check=\"registry\"} 1\n", 10*time.Second)
	t.Logf("warning raised %v after the mkdir", time.Since(start).Round(time.Millisecond))
	if code, body := probeHTTP(t, addr, "/ready"); code != http.StatusOK {
		t.Errorf("/ready %d %q while the entry is missing: want 200 (a warning, not a reason to be unready)", code, body)
	}
	_, body := probeHTTP(t, addr, "/stats")
	var rep struct {
		Health struct {
			Ready    bool     `json:"ready"`
			Warnings []string `json:"warnings"`
		} `json:"health"`
	}
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatalf("/stats: %v\n%s", err, body)
	}
	if !rep.Health.Ready || len(rep.Health.Warnings) != 1 || !strings.HasPrefix(rep.Health.Warnings[0], "registry: ") ||
		!strings.Contains(rep.Health.Warnings[0], "demo.Echo are not in the registry") || !strings.Contains(rep.Health.Warnings[0], path) {
		t.Errorf("/stats health %+v: want ready, one registry warning naming demo.Echo and %s", rep.Health, path)
	}
	r := runCommand(t, 20*time.Second, nil, "stats", addr)
	t.Logf("airnode stats:\n%s", r.stdout)
	if r.code != 0 || !strings.Contains(r.stdout, "demo.Echo are not in the registry") {
		t.Errorf("airnode stats: exit %d, stdout %q: want the registry warning", r.code, r.stdout)
	}

	if err := os.Remove(path); err != nil { // rmdir
		t.Fatal(err)
	}
	waitProbe(t, addr, "/metrics", http.StatusOK, "airnode_health_warning{check=\"registry\"} 0\n", 10*time.Second)
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		t.Errorf("entry after the rmdir: %v, %v; want it put back", st, err)
	}
	// The warning clears before the Info line reaches the log pipe.
	waitFor(t, "the Info that the entry is back", func() bool {
		return strings.Contains(p.logText(), "entry re-created")
	})
}
