package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/zktest"
	"github.com/airnode/airnode/spi"
)

// registerVersions registers, in ZooKeeper s under root, n provider entries
// of demo.Echo (versions "0.0" to "n-1.0", as a serve of n versions does)
// and the given consumer entries, through a zookeeper registry kept open
// until the test ends (the entries are its session's).
func registerVersions(tb testing.TB, s *zktest.Server, root string, n int, consumers ...string) {
	tb.Helper()
	reg, err := zookeeper.Builder{}.Build(spi.MustParse(s.URL("root=" + root + "&session.timeout=60s")))
	if err != nil {
		tb.Fatal(err)
	}
	// Its own logger: the default one is the CLI's while a test in
	// parallel runs a command in this process (cli.airnode), and this
	// registry's session goroutine logs when the test stops ZooKeeper
	// (clean-clone CI: a data race on that test's output buffer).
	reg.(spi.LoggerUser).UseLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	tb.Cleanup(func() { _ = reg.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ts := strconv.FormatInt(time.Now().UnixMilli(), 10)
	var urls []string
	for i := 0; i < n; i++ {
		urls = append(urls, fmt.Sprintf("airnode://127.0.0.1:25001/demo.Echo?methods=Echo%%2CFail%%2CInfo%%2CPayload%%2CSleep&pid=1271&side=provider&timestamp=%s&transport=tcp&version=%d.0&warmup=10m&weight=100", ts, i))
	}
	for _, u := range append(urls, consumers...) {
		if err := reg.Register(ctx, spi.MustParse(u)); err != nil {
			tb.Fatal(err)
		}
	}
}

// nu43 finding 3: `registry ls` on ZooKeeper read the providers and the
// consumers node of an interface once per service key, and each read
// parsed (and sorted) every entry of every version: n versions of one
// interface cost n × n entries (301 versions: 6 s of CPU). It now reads
// each node once per interface and splits the entries by key: the
// ZooKeeper requests of one ls are as many for 100 versions as for 10
// (the server's own count), and each key still gets its own providers and
// consumers, from ZooKeeper and, with it down, from file.cache.
func TestRegistryE2E_LsZooKeeperReadsEachInterfaceOnce(t *testing.T) {
	t.Parallel()
	zks := startZooKeeper(t)
	cache := filepath.Join(t.TempDir(), "cache.json")
	requests := map[int]int64{}
	for _, n := range []int{10, 100} {
		root := "zk1ls" + strconv.Itoa(n)
		registerVersions(t, zks, root, n,
			"airnode://127.0.0.1:25100/demo.Echo?side=consumer&version=3.0",
			"airnode://127.0.0.1:25101/demo.Echo?side=consumer&version=3.0",
			"airnode://127.0.0.1:25102/demo.Echo?side=consumer&version=4.0&group=g")
		reg := zks.URL("root=" + root + "&file.cache=" + url.QueryEscape(cache))
		before, err := zks.Received()
		if err != nil {
			t.Fatal(err)
		}
		r := runCommand(t, 30*time.Second, noAirnodeEnv, "registry", "ls", "--summary", "--registry", reg)
		after, err := zks.Received()
		if err != nil {
			t.Fatal(err)
		}
		requests[n] = after - before
		t.Logf("ls --summary of %d versions: %d ZooKeeper requests, %v", n, requests[n], rounded(r.elapsed))
		if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("%d services, %d providers on 1 address, 2 consumers", n, n)) {
			t.Fatalf("ls: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		for i := 0; i < n; i++ {
			consumers := "0"
			if i == 3 {
				consumers = "2"
			}
			if !row(fmt.Sprintf("demo.Echo:%d.0", i), "1", consumers).MatchString(r.stdout) {
				t.Fatalf("ls lacks row demo.Echo:%d.0 1 %s:\n%s", i, consumers, r.stdout)
			}
		}
	}
	// The session's own requests (connect, pings, close) and a walk of the
	// root; per service key they were 2 reads, 180 more for 100 versions.
	if requests[100] > requests[10]+5 {
		t.Errorf("ls of 100 versions sent %d ZooKeeper requests, of 10 versions %d; want as many (each node read once)", requests[100], requests[10])
	}

	zks.Stop()
	t.Cleanup(func() { _ = zks.Restart() })
	r := runCommand(t, 30*time.Second, noAirnodeEnv, "registry", "ls", "--registry", zks.URL("root=zk1ls10&connect.timeout=500ms&file.cache="+url.QueryEscape(cache)))
	for i := 0; i < 10; i++ {
		if !regexp.MustCompile(`(?m)^demo\.Echo:` + strconv.Itoa(i) + `\.0\s+\(1 provider, cached list saved \d+s ago\)$`).MatchString(r.stdout) {
			t.Fatalf("ls with ZooKeeper down: exit %d, no cached line for demo.Echo:%d.0:\n%s%s", r.code, i, r.stdout, r.stderr)
		}
	}
	if r.code != 0 || !strings.HasPrefix(r.stdout, "ZooKeeper "+zks.Addr()+" unreachable for ") {
		t.Errorf("ls with ZooKeeper down: exit %d; want the note that the lists are file.cache's first:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// BenchmarkRegistryLsZooKeeperVersions is registry ls --summary, with a
// new session each time as the command has, of one interface with 10,
// 100 and 300 versions in a real ZooKeeper (nu43: 0.65 s of CPU for 101,
// 6 s for 301 before it read each interface once).
func BenchmarkRegistryLsZooKeeperVersions(b *testing.B) {
	s, err := zktest.Start()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	for _, n := range []int{10, 100, 300} {
		root := "bench" + strconv.Itoa(n)
		registerVersions(b, s, root, n)
		b.Run(strconv.Itoa(n)+"versions", func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				reg, err := zookeeper.Builder{}.Build(spi.MustParse(s.URL("root=" + root)))
				if err != nil {
					b.Fatal(err)
				}
				err = registryList(context.Background(), reg, "zk", nil, time.Now(), true, io.Discard)
				_ = reg.Close()
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
