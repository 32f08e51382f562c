package cli

import (
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// `airnode registry ls` with ZooKeeper stopped: with file.cache it prints
// the cache's lists, after a first line naming ZooKeeper, how long it has
// been unreachable and the cache, each service with its list's age; without
// a cache it fails naming the server and how long it has been unreachable.
// Each is a new process, so a first contact: it waits connect.timeout once.
func TestRegistryE2E_LsWithZooKeeperDown(t *testing.T) {
	t.Parallel()
	zks := startZooKeeper(t)
	p := serveWith(t, "127.0.0.1:0", zks.URL("session.timeout=4s"))
	cache := filepath.Join(t.TempDir(), "cache.json")
	bare := zks.URL("connect.timeout=1s&session.timeout=4s")
	cached := bare + "&file.cache=" + url.QueryEscape(cache)
	ls := func(reg string, args ...string) result {
		t.Helper()
		return runCommand(t, 20*time.Second, noAirnodeEnv, "registry", append([]string{"ls", "--registry", reg}, args...)...)
	}
	if r := ls(cached); r.code != 0 || strings.Contains(r.stdout, "unreachable") || !strings.Contains(r.stdout, p.addr) {
		t.Fatalf("ls with ZooKeeper up: exit %d\n%s%s", r.code, r.stdout, r.stderr) // writes file.cache
	}

	zks.Stop()
	t.Cleanup(func() { _ = zks.Restart() })
	head := regexp.MustCompile(`^ZooKeeper ` + regexp.QuoteMeta(zks.Addr()) + ` unreachable for [0-9.]+m?s: lists from file\.cache ` + regexp.QuoteMeta(cache) + `, which may be out of date\n`)
	svc := regexp.MustCompile(`(?m)^demo\.Echo\s+\(1 provider, cached list saved \d+s ago\)$`)
	for _, args := range [][]string{nil, {"demo.Echo"}} {
		r := ls(cached, args...)
		t.Logf("ls %v with ZooKeeper down and file.cache: exit %d after %v:\n%s", args, r.code, rounded(r.elapsed), r.stdout)
		if r.code != 0 || !head.MatchString(r.stdout) || !svc.MatchString(r.stdout) || !strings.Contains(r.stdout, p.addr) {
			t.Errorf("ls %v: exit %d, stdout %q, stderr %q; want the cached list said to be one", args, r.code, r.stdout, r.stderr)
		}
	}
	r := ls(bare)
	t.Logf("ls with ZooKeeper down, no file.cache: exit %d after %v: %s", r.code, rounded(r.elapsed), r.stderr)
	if r.code != 1 || !strings.Contains(r.stderr, "no session with "+zks.Addr()+": unreachable for ") || !strings.Contains(r.stderr, "connection refused") {
		t.Errorf("ls without a cache: exit %d, stderr %q; want exit 1 naming the server and how long it has been unreachable", r.code, r.stderr)
	}
}
