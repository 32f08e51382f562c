package directory_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/kernel/directory"
	"github.com/airnode/airnode/spi"
)

// pushRegistry is a registry whose test pushes whole provider lists,
// as ZooKeeper's re-list after a watch does (the memory registry pushes
// one change at a time).
type pushRegistry struct {
	mu     sync.Mutex
	notify spi.NotifyFunc
	list   []spi.URL
}

func (r *pushRegistry) Register(context.Context, spi.URL) error   { return spi.ErrNotSupported }
func (r *pushRegistry) Unregister(context.Context, spi.URL) error { return spi.ErrNotSupported }
func (r *pushRegistry) Lookup(context.Context, spi.URL) ([]spi.URL, error) {
	return nil, spi.ErrNotSupported
}
func (r *pushRegistry) Services(context.Context) ([]string, error) { return nil, spi.ErrNotSupported }
func (r *pushRegistry) Close() error                               { return nil }

func (r *pushRegistry) Subscribe(_ context.Context, _ spi.URL, notify spi.NotifyFunc) (spi.Subscription, error) {
	r.mu.Lock()
	r.notify = notify
	list := r.list
	r.mu.Unlock()
	notify(list)
	return stopFunc(func() {
		r.mu.Lock()
		r.notify = nil
		r.mu.Unlock()
	}), nil
}

type stopFunc func()

func (f stopFunc) Stop() { f() }

// push delivers the providers on ports ports (127.0.0.1:port), as the
// registry's whole list.
func (r *pushRegistry) push(ports ...int) {
	var list []spi.URL
	for _, p := range ports {
		list = append(list, spi.MustParse(fmt.Sprintf("airnode://127.0.0.1:%d/demo.Echo?side=provider", p)))
	}
	r.mu.Lock()
	r.list = list
	notify := r.notify
	r.mu.Unlock()
	if notify != nil {
		notify(list)
	}
}

// logRecorder keeps the messages of the records logged at Warn and
// above.
type logRecorder struct {
	mu    sync.Mutex
	warns []string
	infos []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Level >= slog.LevelWarn {
		l.warns = append(l.warns, r.Message)
	} else if r.Level == slog.LevelInfo {
		l.infos = append(l.infos, r.Message)
	}
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) warnings() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.warns...)
}

func (l *logRecorder) count(level slog.Level, substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := l.infos
	if level >= slog.LevelWarn {
		lines = l.warns
	}
	n := 0
	for _, m := range lines {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

// setupPush starts a directory of consumer (extra URL keys query) over
// a pushRegistry listing ports.
func setupPush(t *testing.T, query string, ports ...int) (*pushRegistry, *directory.Directory, *factory, *logRecorder) {
	t.Helper()
	reg := &pushRegistry{}
	reg.push(ports...)
	f := &factory{}
	rec := &logRecorder{}
	d := directory.New(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer"+query), reg, "push://test", f.newInvoker, slog.New(rec))
	t.Cleanup(func() { _ = d.Close() })
	start(t, d)
	waitLen(t, d, len(ports))
	return reg, d, f, rec
}

func ports(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

// waitFor polls cond every 5 ms up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEmptyProtectionKeepsConnectedProviders (tester22 finding 1): a
// notification listing no provider while the reference's providers are
// connected keeps them, callable, with one Warn naming the registry,
// the service and how many were kept (no per-provider line), marks them
// in Kept, and counts the episode; the registry listing a provider
// again ends it.
func TestEmptyProtectionKeepsConnectedProviders(t *testing.T) {
	before := counters.Directory.EmptyProtections.Load()
	reg, d, f, rec := setupPush(t, "", ports(1, 5)...)
	f.byAddress("127.0.0.1:5")[0].available.Store(false) // down: not kept
	reg.push()
	if n := len(d.All()); n != 4 {
		t.Fatalf("after an empty push %d providers listed, want the 4 connected ones kept", n)
	}
	if n := len(d.List(nil)); n != 4 {
		t.Fatalf("List has %d, want 4", n)
	}
	if got := f.byAddress("127.0.0.1:5")[0].closed.Load(); got != 1 {
		t.Fatalf("unconnected provider's invoker closed %d times, want 1", got)
	}
	kept := d.Kept()
	if len(kept) != 4 || kept[0].Reason != directory.KeptEmpty || kept[0].Provider.Address() != "127.0.0.1:1" {
		t.Fatalf("Kept() = %v, want 127.0.0.1:1..4 kept by empty protection", kept)
	}
	if !strings.Contains(kept[0].String(), "127.0.0.1:1 (kept by empty protection since ") {
		t.Fatalf("Kept.String() = %q", kept[0].String())
	}
	ws := rec.warnings()
	if len(ws) != 1 || !strings.Contains(ws[0], "push://test lists no provider of demo.Echo; keeping the 4 still connected") ||
		!strings.Contains(ws[0], directory.KeyEmptyProtection+"=false") {
		t.Fatalf("warnings %q, want one naming the registry, the service and 4 kept", ws)
	}
	if n := rec.count(slog.LevelInfo, "provider removed"); n != 1 {
		t.Fatalf("%d 'provider removed' lines, want 1 (the unconnected one)", n)
	}
	if got := counters.Directory.EmptyProtections.Load() - before; got != 1 {
		t.Fatalf("EmptyProtections counted %d, want 1", got)
	}
	// More empty pushes: the same episode.
	reg.push()
	reg.push()
	if len(d.All()) != 4 || len(rec.warnings()) != 1 {
		t.Fatalf("after more empty pushes: %d listed, warnings %q", len(d.All()), rec.warnings())
	}

	// The registry lists the 4 again (re-registered): the protection
	// ends, nothing is kept, no invoker was replaced.
	reg.push(1, 2, 3, 4)
	if len(d.Kept()) != 0 || len(d.All()) != 4 {
		t.Fatalf("after the providers are back: kept %v, listed %d", d.Kept(), len(d.All()))
	}
	if n := rec.count(slog.LevelInfo, "empty protection ended: the registry lists 4 provider(s) again"); n != 1 {
		t.Fatalf("want one Info saying the protection ended, infos: %q", rec.infos)
	}
	if n := len(f.byAddress("127.0.0.1:1")); n != 1 {
		t.Fatalf("%d invokers made for 127.0.0.1:1, want 1 (kept, not re-made)", n)
	}
}

// TestEmptyProtectionOff: registry.empty.protection=false keeps today's
// behaviour: an empty push empties the reference.
func TestEmptyProtectionOff(t *testing.T) {
	reg, d, f, rec := setupPush(t, "&"+directory.KeyEmptyProtection+"=false", ports(1, 3)...)
	reg.push()
	if n := len(d.All()); n != 0 {
		t.Fatalf("%d listed after an empty push with protection off, want 0", n)
	}
	if got := f.byAddress("127.0.0.1:1")[0].closed.Load(); got != 1 {
		t.Fatalf("invoker closed %d times, want 1", got)
	}
	if len(rec.warnings()) != 0 || d.Kept() != nil {
		t.Fatalf("warnings %q, kept %v: want none", rec.warnings(), d.Kept())
	}
	if why := strings.Join(d.Ignored(), "; "); !strings.Contains(why, "have left the registry") {
		t.Fatalf("Ignored() = %q, want the providers named as having left", why)
	}
}

// TestEmptyProtectionDropsAProviderThatGoesAway: a kept provider that
// announces its shutdown (go-away/read-only: unavailable) or loses its
// connection is removed, its invoker closed, without a push; when the
// last kept one goes the reference is empty.
func TestEmptyProtectionDropsAProviderThatGoesAway(t *testing.T) {
	reg, d, f, rec := setupPush(t, "", 1, 2)
	reg.push()
	if len(d.All()) != 2 {
		t.Fatalf("%d kept, want 2", len(d.All()))
	}
	f.byAddress("127.0.0.1:1")[0].available.Store(false)
	waitFor(t, "the provider that went away removed", func() bool { return len(d.All()) == 1 })
	if got := f.byAddress("127.0.0.1:1")[0].closed.Load(); got != 1 {
		t.Fatalf("invoker closed %d times, want 1", got)
	}
	if k := d.Kept(); len(k) != 1 || k[0].Provider.Address() != "127.0.0.1:2" {
		t.Fatalf("Kept() = %v, want 127.0.0.1:2", k)
	}
	f.byAddress("127.0.0.1:2")[0].available.Store(false)
	waitFor(t, "the last kept provider removed", func() bool { return len(d.All()) == 0 })
	if d.Kept() != nil {
		t.Fatalf("Kept() = %v, want nil", d.Kept())
	}
	if n := rec.count(slog.LevelInfo, "empty protection ended: the providers kept have gone"); n != 1 {
		t.Fatalf("want one Info saying the protection ended, infos %q", rec.infos)
	}
	// A new episode after the end warns again.
	reg.push(3)
	waitLen(t, d, 1)
	reg.push()
	if len(d.All()) != 1 || len(rec.warnings()) != 2 {
		t.Fatalf("second episode: %d listed, warnings %q", len(d.All()), rec.warnings())
	}
}

// TestRemovalDampedThenApplied (tester22 finding 5): a push dropping 7
// of 10 connected providers keeps them for registry.removal.grace, one
// Warn, then removes them; providers listed again meanwhile stay.
func TestRemovalDampedThenApplied(t *testing.T) {
	before := counters.Directory.DampedRemovals.Load()
	reg, d, f, rec := setupPush(t, "&"+directory.KeyRemovalGrace+"=1s", ports(1, 10)...)
	began := time.Now()
	reg.push(1, 2, 3)
	if n := len(d.All()); n != 10 {
		t.Fatalf("%d listed right after a push dropping 7 of 10, want 10 (damped)", n)
	}
	k := d.Kept()
	if len(k) != 7 || k[0].Reason != directory.KeptDamped || k[0].Until.IsZero() {
		t.Fatalf("Kept() = %v, want 7 kept by removal damping", k)
	}
	if ws := rec.warnings(); len(ws) != 1 || !strings.Contains(ws[0], "push://test dropped 7 of the 10 connected providers of demo.Echo at once") {
		t.Fatalf("warnings %q, want one", ws)
	}
	if got := counters.Directory.DampedRemovals.Load() - before; got != 1 {
		t.Fatalf("DampedRemovals counted %d, want 1", got)
	}
	// 4 and 5 come back (re-registering); 6 loses its connection (goes
	// at once); a push dropping 3 more during the grace: same episode.
	reg.push(1, 2, 3, 4, 5)
	f.byAddress("127.0.0.1:6")[0].available.Store(false)
	waitFor(t, "the disconnected provider removed", func() bool { return len(d.All()) == 9 })
	if len(rec.warnings()) != 1 {
		t.Fatalf("warnings %q, want still one", rec.warnings())
	}
	waitFor(t, "the damped removals applied after the grace", func() bool { return len(d.All()) == 5 })
	if took := time.Since(began); took < 900*time.Millisecond {
		t.Fatalf("damped removals applied after %v, want after the 1s grace", took)
	}
	for _, a := range []string{"127.0.0.1:7", "127.0.0.1:10"} {
		if got := f.byAddress(a)[0].closed.Load(); got != 1 {
			t.Fatalf("%s invoker closed %d times, want 1", a, got)
		}
	}
	if got := f.byAddress("127.0.0.1:4")[0].closed.Load(); got != 0 {
		t.Fatal("a provider listed again was closed")
	}
	if d.Kept() != nil {
		t.Fatalf("Kept() = %v after the grace", d.Kept())
	}
}

// TestRemovalOfFewIsImmediate: a rolling restart's one removal of 10,
// 2 of 10 within seconds, and one of 2 (a single provider is never
// damped) apply at once; so do the removals of unconnected providers
// in a mass removal; damping=0 turns damping off.
func TestRemovalOfFewIsImmediate(t *testing.T) {
	reg, d, _, rec := setupPush(t, "", ports(1, 10)...)
	reg.push(ports(1, 9)...)
	if n := len(d.All()); n != 9 {
		t.Fatalf("%d listed after one of 10 left, want 9 at once", n)
	}
	reg.push(ports(1, 8)...) // 1 of 9, 2 of 10 within seconds
	if n := len(d.All()); n != 8 {
		t.Fatalf("%d listed after 1 of 9 left, want 8 at once", n)
	}
	if len(rec.warnings()) != 0 || d.Kept() != nil {
		t.Fatalf("warnings %q, kept %v", rec.warnings(), d.Kept())
	}

	reg2, d2, f2, _ := setupPush(t, "", ports(1, 10)...)
	for _, p := range ports(4, 7) {
		f2.byAddress(fmt.Sprintf("127.0.0.1:%d", p))[0].available.Store(false)
	}
	reg2.push(1, 2, 3) // drops 7, all down
	if n := len(d2.All()); n != 3 {
		t.Fatalf("%d listed after 7 unconnected left, want 3 at once", n)
	}

	reg4, d4, _, rec4 := setupPush(t, "", 1, 2)
	reg4.push(1)
	if n := len(d4.All()); n != 1 || len(rec4.warnings()) != 0 {
		t.Fatalf("1 of 2 left: %d listed (want 1), warnings %q", n, rec4.warnings())
	}

	reg3, d3, _, rec3 := setupPush(t, "&"+directory.KeyRemovalDamping+"=0", ports(1, 10)...)
	reg3.push(1)
	if n := len(d3.All()); n != 1 || len(rec3.warnings()) != 0 {
		t.Fatalf("damping=0: %d listed (want 1), warnings %q", n, rec3.warnings())
	}
}

// TestRemovalOneByOneIsDampedAsOne: removals of connected providers
// within a few seconds add up (a registry dropping a fleet's entries one
// push at a time): 2 of 10, then 2 more, is 4 of 10, damped.
func TestRemovalOneByOneIsDampedAsOne(t *testing.T) {
	reg, d, _, rec := setupPush(t, "&"+directory.KeyRemovalGrace+"=10s", ports(1, 10)...)
	reg.push(ports(1, 8)...)
	if n := len(d.All()); n != 8 {
		t.Fatalf("%d listed after 2 of 10 left, want 8 at once", n)
	}
	reg.push(ports(1, 6)...)
	if n := len(d.All()); n != 8 || len(d.Kept()) != 2 {
		t.Fatalf("after 2 more left: %d listed (want 8), kept %v", n, d.Kept())
	}
	if ws := rec.warnings(); len(ws) != 1 || !strings.Contains(ws[0], "dropped 4 of the 10 connected providers") {
		t.Fatalf("warnings %q, want one counting 4 of 10", ws)
	}
}

// TestRollingRestartIsNotDamped: providers that leave one after the
// other, each back at its address (a new entry) before the next goes,
// never add up to a damped removal, however fast.
func TestRollingRestartIsNotDamped(t *testing.T) {
	reg, d, _, rec := setupPush(t, "", ports(1, 4)...)
	for i := 1; i <= 4; i++ {
		var gone []int
		for _, p := range ports(1, 4) {
			if p != i {
				gone = append(gone, p)
			}
		}
		reg.push(gone...)
		if n := len(d.All()); n != 3 {
			t.Fatalf("step %d: %d listed, want 3 (the restarting one removed at once)", i, n)
		}
		reg.push(ports(1, 4)...)
	}
	if len(rec.warnings()) != 0 {
		t.Fatalf("warnings %q, want none", rec.warnings())
	}
}

// TestHalfRemovedIsDamped (tester22 finding 5 as re-run: the first of
// two provider processes of 50 re-registered): 50 of 100 dropped at
// once is damped.
func TestHalfRemovedIsDamped(t *testing.T) {
	reg, d, _, rec := setupPush(t, "", ports(1, 100)...)
	reg.push(ports(1, 50)...)
	if n := len(d.All()); n != 100 || len(d.Kept()) != 50 {
		t.Fatalf("%d listed (want 100), %d kept (want 50)", n, len(d.Kept()))
	}
	if len(rec.warnings()) != 1 {
		t.Fatalf("warnings %q, want one", rec.warnings())
	}
	reg.push(ports(1, 100)...)
	if n := len(d.All()); n != 100 || d.Kept() != nil {
		t.Fatalf("after the rest re-registered: %d listed, kept %v", n, d.Kept())
	}
}

// TestEmptyThenPartialRefill (tester22 finding 1b): after empty
// protection, the first provider re-registering ends it and the others,
// still connected, are damped rather than dropped.
func TestEmptyThenPartialRefill(t *testing.T) {
	reg, d, _, rec := setupPush(t, "&"+directory.KeyRemovalGrace+"=10s", ports(1, 10)...)
	reg.push()
	reg.push(1)
	if n := len(d.All()); n != 10 {
		t.Fatalf("%d listed after the first provider re-registered, want 10 (the others damped)", n)
	}
	reg.push(ports(1, 10)...)
	if d.Kept() != nil || len(d.All()) != 10 {
		t.Fatalf("after all re-registered: kept %v, listed %d", d.Kept(), len(d.All()))
	}
	if ws := rec.warnings(); len(ws) != 2 {
		t.Fatalf("warnings %q, want the empty protection's and the damping's", ws)
	}
}

// TestProtectionKeysChecked: bad values of the protection keys fail
// Start with a *spi.ParamError naming the key.
func TestProtectionKeysChecked(t *testing.T) {
	for _, q := range []string{
		directory.KeyEmptyProtection + "=maybe",
		directory.KeyRemovalDamping + "=101",
		directory.KeyRemovalDamping + "=-1",
		directory.KeyRemovalGrace + "=10ms",
		directory.KeyRemovalGrace + "=soon",
	} {
		d := directory.New(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer&"+q), &pushRegistry{}, "push://test", (&factory{}).newInvoker, nil)
		err := d.Start(context.Background())
		var pe *spi.ParamError
		if !errors.As(err, &pe) || !strings.Contains(q, pe.Key) {
			t.Errorf("%s: Start = %v, want a *spi.ParamError naming the key", q, err)
		}
		_ = d.Close()
	}
}
