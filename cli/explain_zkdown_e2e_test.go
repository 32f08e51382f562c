package cli

import (
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// `airnode list --explain SERVICE_KEY` with ZooKeeper stopped (by its PID)
// and a file.cache: the providers row says its list is the cache's, with
// its age, how long ZooKeeper has been unreachable and the cache's path,
// as registry ls does (it showed the cached providers as if live before).
// With ZooKeeper up the row says nothing of a cache.
func TestExplainE2E_ProvidersFromFileCacheWithZooKeeperDown(t *testing.T) {
	t.Parallel()
	zks := startZooKeeper(t)
	p := serveWith(t, "127.0.0.1:0", zks.URL("session.timeout=4s"))
	cache := filepath.Join(t.TempDir(), "cache.json")
	cfg := writeConfig(t, "registry: "+zks.URL("connect.timeout=1s&session.timeout=4s")+"&file.cache="+url.QueryEscape(cache)+"\n")
	explain := func() result {
		t.Helper()
		return runCommand(t, 20*time.Second, noAirnodeEnv, "list", "--config", cfg, "--explain", "demo.Echo")
	}
	live := regexp.MustCompile(`(?m)^providers\s+1 in \S+: ` + regexp.QuoteMeta(p.addr) + ` \(transport `)
	r := explain() // writes file.cache
	if r.code != 0 || !live.MatchString(r.stdout) || strings.Contains(r.stdout, "cached") {
		t.Fatalf("list --explain with ZooKeeper up: exit %d, stderr %q\n%s", r.code, r.stderr, r.stdout)
	}

	zks.Stop()
	t.Cleanup(func() { _ = zks.Restart() })
	cached := regexp.MustCompile(`(?m)^providers\s+1 in \S+, cached list saved \d+s ago \(ZooKeeper ` + regexp.QuoteMeta(zks.Addr()) +
		` unreachable for [0-9.]+m?s: from file\.cache ` + regexp.QuoteMeta(cache) + `, which may be out of date\): ` + regexp.QuoteMeta(p.addr) + ` \(transport `)
	r = explain()
	t.Logf("list --explain with ZooKeeper down and file.cache: exit %d after %v:\n%s", r.code, rounded(r.elapsed), r.stdout)
	if r.code != 0 || !cached.MatchString(r.stdout) {
		t.Errorf("list --explain with ZooKeeper down: exit %d, stderr %q; want the providers row to say its list is file.cache's\n%s", r.code, r.stderr, r.stdout)
	}
}
