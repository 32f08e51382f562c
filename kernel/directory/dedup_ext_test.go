package directory_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/spi"
)

// debugLog keeps the messages logged at Debug.
type debugLog struct {
	mu   sync.Mutex
	msgs []string
}

func (h *debugLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *debugLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *debugLog) WithGroup(string) slog.Handler            { return h }
func (h *debugLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level == slog.LevelDebug {
		h.mu.Lock()
		h.msgs = append(h.msgs, r.Message)
		h.mu.Unlock()
	}
	return nil
}

func (h *debugLog) count(prefix string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.msgs {
		if strings.HasPrefix(m, prefix) {
			n++
		}
	}
	return n
}

// waitProviders waits until Providers() is exactly want (URL strings, in
// order) and List has one invoker each, whose URL has the provider's
// timestamp.
func waitProviders(t *testing.T, d *directory.Directory, want ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ps, l := d.Providers(), d.List(nil)
		ok := len(ps) == len(want) && len(l) == len(want)
		for i := 0; ok && i < len(want); i++ {
			ts, _ := ps[i].Param("timestamp")
			got, _ := l[i].URL().Param("timestamp")
			ok = ps[i].String() == want[i] && got == ts
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Providers = %v (%d invokers), want %v", ps, len(l), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestT16_7_DuplicateAddressCountsOnce (tester16 finding 7): after kill -9
// and a quick restart on the same port, the registry lists the address
// twice (ZooKeeper keeps the dead instance's ephemeral entry until its
// session expires): the directory counts it once, keeping the entry with
// the highest timestamp, so the address gets one share and the restarted
// process its own warm-up; on equal timestamps the entry seen last wins.
// Entries of one address but another service key are other providers.
func TestT16_7_DuplicateAddressCountsOnce(t *testing.T) {
	reg, err := memory.NewBuilder().Build(spi.MustParse("memory://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close() })
	var log debugLog
	f := &factory{}
	d := directory.New(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"), reg, "memory://", f.newInvoker, slog.New(&log))
	t.Cleanup(func() { _ = d.Close() })

	const (
		old      = "airnode://127.0.0.1:1/demo.Echo?side=provider&timestamp=1000&warmup=600000"
		other    = "airnode://127.0.0.1:2/demo.Echo?side=provider&timestamp=1500"
		restart  = "airnode://127.0.0.1:1/demo.Echo?side=provider&timestamp=2000&warmup=600000"
		tieFirst = "airnode://127.0.0.1:3/demo.Echo?a=1&side=provider&timestamp=5"
		tieLater = "airnode://127.0.0.1:3/demo.Echo?a=2&side=provider&timestamp=5"
	)
	register(t, reg, old)
	register(t, reg, other)
	start(t, d)
	waitProviders(t, d, old, other)

	// The restarted instance registers while the old entry is still there.
	register(t, reg, restart)
	waitProviders(t, d, restart, other)
	if inv := f.byAddress("127.0.0.1:1"); len(inv) != 2 || inv[0].closed.Load() != 1 || inv[1].closed.Load() != 0 {
		t.Fatalf("invokers of 127.0.0.1:1: %d, want the old one closed once and the new one open", len(inv))
	}
	if log.count("provider listed twice at one address") == 0 {
		t.Error("no Debug line for the dropped entry")
	}
	// The old entry expires: nothing changes.
	if err := reg.Unregister(context.Background(), spi.MustParse(old)); err != nil {
		t.Fatal(err)
	}
	waitProviders(t, d, restart, other)
	if n := len(f.byAddress("127.0.0.1:1")); n != 2 {
		t.Errorf("%d invokers made for 127.0.0.1:1, want 2 (the old entry's expiry makes none)", n)
	}

	// Equal timestamps: the entry seen last wins, and stays.
	register(t, reg, tieFirst)
	waitProviders(t, d, restart, other, tieFirst)
	register(t, reg, tieLater)
	waitProviders(t, d, restart, other, tieLater)
	register(t, reg, "airnode://127.0.0.1:4/demo.Echo?side=provider") // another push
	waitProviders(t, d, restart, other, tieLater, "airnode://127.0.0.1:4/demo.Echo?side=provider")
	if err := reg.Unregister(context.Background(), spi.MustParse(tieLater)); err != nil {
		t.Fatal(err)
	}
	waitProviders(t, d, restart, other, tieFirst, "airnode://127.0.0.1:4/demo.Echo?side=provider")
}
