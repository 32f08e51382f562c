package cli

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// TestU8_LsEmptyRootNamesDubbosRoot (tester74 #8): `registry ls` of a
// plain zookeeper://h:p (root /airnode, empty) said only "no services
// in ..." while /dubbo held a Dubbo fleet's interfaces; it now says where
// they are and what to add.
func TestU8_LsEmptyRootNamesDubbosRoot(t *testing.T) {
	t.Parallel()
	s := startZooKeeper(t)
	registerVersions(t, s, "dubbo", 1)
	reg, err := zookeeper.Builder{}.Build(spi.MustParse(s.URL("")))
	if err != nil {
		t.Fatal(err)
	}
	reg.(spi.LoggerUser).UseLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer reg.Close()
	var b strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := registryList(ctx, reg, "zookeeper://"+s.Addr(), nil, time.Now(), false, &b); err != nil {
		t.Fatal(err)
	}
	if want := "nothing under /airnode; /dubbo holds 1 interface: add ?root=/dubbo\n"; !strings.Contains(b.String(), want) {
		t.Errorf("registry ls printed %q, want it to say %q", b.String(), want)
	}
}

// TestU6_WatchPrintsARuleWrittenWhileWatching (tester74 #6): registry
// watch printed nothing when a Dubbo Admin override was written while it
// ran; it now prints the rule and that airnode does not apply it.
func TestU6_WatchPrintsARuleWrittenWhileWatching(t *testing.T) {
	t.Parallel()
	s := startZooKeeper(t)
	reg, err := zookeeper.Builder{}.Build(spi.MustParse(s.URL("root=/dubbo")))
	if err != nil {
		t.Fatal(err)
	}
	reg.(spi.LoggerUser).UseLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer reg.Close()
	var out logbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- registryWatch(ctx, reg, "zookeeper://"+s.Addr()+"/dubbo", "demo.Echo", &out, io.Discard, "text", false)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("output lacks %q:\n%s", want, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("demo.Echo: 0 providers")
	time.Sleep(300 * time.Millisecond) // the rules watch is armed
	raw := zkClient(t, s)
	override := "override://127.0.0.1:29001/demo.Echo?category=configurators&disabled=true"
	for _, p := range []string{"/dubbo/demo.Echo/configurators", "/dubbo/demo.Echo/configurators/" + url.QueryEscape(override)} {
		if _, err := raw.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && err != zk.ErrNodeExists {
			t.Fatal(err)
		}
	}
	waitFor("! Dubbo Admin rule written, not applied by airnode: " + override)
}

// TestBY_LsEmptyDubboRoot (tester90 #3b): `registry ls` of an empty
// ?root=/dubbo printed the root escaped ("?root=%2Fdubbo"), and named
// /dubbo when /airnode was empty but not /airnode when /dubbo was. It
// prints the root as written and names airnode's default root.
func TestBY_LsEmptyDubboRoot(t *testing.T) {
	t.Parallel()
	s := startZooKeeper(t)
	own, err := zookeeper.Builder{}.Build(spi.MustParse(s.URL("")))
	if err != nil {
		t.Fatal(err)
	}
	own.(spi.LoggerUser).UseLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer own.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := own.Register(ctx, spi.MustParse("airnode://127.0.0.1:35901/demo.Echo?side=provider")); err != nil {
		t.Fatal(err)
	}
	u := spi.MustParse(s.URL("root=/dubbo"))
	reg, err := zookeeper.Builder{}.Build(u)
	if err != nil {
		t.Fatal(err)
	}
	reg.(spi.LoggerUser).UseLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	defer reg.Close()
	var b strings.Builder
	if err := registryList(ctx, reg, registryDesc(u), nil, time.Now(), false, &b); err != nil {
		t.Fatal(err)
	}
	want := "no services in zookeeper://" + s.Addr() + "?root=/dubbo\nnothing under /dubbo; /airnode holds 1 interface: drop ?root= (the default root is /airnode)\n"
	if b.String() != want {
		t.Errorf("registry ls printed %q, want %q", b.String(), want)
	}
}
