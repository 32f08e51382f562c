package kernel

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// TestRD1_AnnouncedShutdownIsNoEmptyProtectionWarning (tester37 F15): the
// README's simplest Go program, a provider and a consumer node on one
// memory registry; the provider's Shutdown announces it (the draining
// event, then the unregister). The consumer's registry then lists no
// provider of the service, and its only provider is the one shutting
// down: nothing was lost that empty protection guards against, so the
// consumer logs no Warn (and counts no empty-protection episode), but
// says at Info that the provider announced its shutdown. The provider
// goes from the reference once its connection closes. Run 10 times over
// real loopback connections, each a fresh pair of nodes on a registry of
// its own, side by side: each run is mostly the provider's shutdown wait
// (DefaultShutdownWait), 20 s in a row under -race.
func TestRD1_AnnouncedShutdownIsNoEmptyProtectionWarning(t *testing.T) {
	cat := testCatalogs(t)
	for i := range 10 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			announcedShutdownRun(t, cat, i)
		})
	}
}

// announcedShutdownRun is run i of
// TestRD1_AnnouncedShutdownIsNoEmptyProtectionWarning.
func announcedShutdownRun(t *testing.T, cat *extension.Catalogs, i int) {
	ctx := context.Background()
	reg := spi.MustParse(fmt.Sprintf("memory://rd1-announced-%d", i))
	provider := NewNode(cat, WithLogger(quiet), WithRegistry(reg))
	t.Cleanup(func() { _ = provider.Close() })
	if _, err := provider.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo")); err != nil {
		t.Fatal(err)
	}
	consumer, logs := faultNode(t, cat, WithRegistry(reg))
	ref, err := consumer.Refer(ctx, spi.MustParse("airnode:///demo.Echo?timeout=2s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := ref.Invoke(ctx, "Echo", "x"); err != nil || v != "x" {
		t.Fatalf("run %d: call = %v, %v", i, v, err)
	}
	start := time.Now()
	if err := provider.Shutdown(ctx); err != nil {
		t.Fatalf("run %d: Shutdown: %v", i, err)
	}
	for len(ref.Providers()) != 0 {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("run %d: after 10s the reference still lists %d providers", i, len(ref.Providers()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	gone := time.Since(start)
	for _, r := range logs.find("directory: ") {
		if r.level >= slog.LevelWarn {
			t.Errorf("run %d: the consumer warned about an announced shutdown: %s", i, r.msg)
		}
	}
	if n := len(logs.find("directory: registry memory://rd1-announced-" + fmt.Sprint(i) + " lists no provider of demo.Echo; its 1 provider(s) announced their shutdown (draining)")); n != 1 {
		var all []string
		for _, r := range *logs.recs {
			all = append(all, r.level.String()+" "+r.msg)
		}
		t.Errorf("run %d: %d Info lines saying the provider announced its shutdown, want 1; logs:\n%s", i, n, strings.Join(all, "\n"))
	}
	if gone > 5*time.Second {
		t.Errorf("run %d: the provider left the reference %v after Shutdown began, want within 5s", i, gone)
	}
	_ = consumer.Close()
}

// TestRD1_LostProviderStillWarns (tester37 F15, the other side): a
// provider the registry drops without its announcing anything (its entry
// lost: unregistered while it runs on) is kept by empty protection, and
// the consumer warns once, within a second or so (its probe's answer,
// then the next check), counting the episode.
func TestRD1_LostProviderStillWarns(t *testing.T) {
	ctx := context.Background()
	cat := testCatalogs(t)
	reg := spi.MustParse("memory://rd1-lost")
	provider := NewNode(cat, WithLogger(quiet), WithRegistry(reg), WithShutdownWait(0))
	t.Cleanup(func() { _ = provider.Close() })
	exp, err := provider.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	consumer, logs := faultNode(t, cat, WithRegistry(reg))
	ref, err := consumer.Refer(ctx, spi.MustParse("airnode:///demo.Echo?timeout=2s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Invoke(ctx, "Echo", "x"); err != nil {
		t.Fatal(err)
	}
	before := counters.Directory.EmptyProtections.Load()
	start := time.Now()
	if err := exp.unregister(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	const warn = "directory: registry memory://rd1-lost lists no provider of demo.Echo; keeping the 1 still connected"
	for len(logs.find(warn)) == 0 {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("no empty-protection Warn 5s after the registry lost the provider")
		}
		time.Sleep(10 * time.Millisecond)
	}
	took := time.Since(start)
	if w := logs.find(warn); len(w) != 1 || w[0].level != slog.LevelWarn {
		t.Fatalf("%d lines %v, want one Warn", len(w), w)
	}
	if got := counters.Directory.EmptyProtections.Load() - before; got != 1 {
		t.Errorf("EmptyProtections counted %d, want 1", got)
	}
	if v, err := ref.Invoke(ctx, "Echo", "y"); err != nil || v != "y" {
		t.Errorf("call to the kept provider = %v, %v", v, err)
	}
	if n := len(logs.find("directory: registry memory://rd1-lost lists no provider of demo.Echo; its")); n != 0 {
		t.Errorf("%d lines said the lost provider announced its shutdown", n)
	}
	t.Logf("Warn %v after the unregister", took.Round(time.Millisecond))
}
