package spitest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// RegistryWait bounds every wait of the registry suite for a push or a
// lookup result. Registries promise pushes within about a second; the bound
// is generous for loaded CI machines.
const RegistryWait = 10 * time.Second

// TestRegistry runs the registry conformance suite. newRegistry
// returns a fresh, unstarted Registry each time it is called; registries
// returned within one test share one backend, so one can act as provider
// and another as consumer. The suite closes every registry it makes. Each
// subtest uses its own service keys, so a backend may be shared by subtests.
//
// Covered: register then lookup, subscribe pushes on add and remove,
// unregister, Close unregisters, idempotent re-register, group/version
// isolation, consumer registrations are not providers, URLs whose values hold
// '=', '&', '/', '%' round-trip, Services listing (skipped when the registry
// returns spi.ErrNotSupported), and the lifecycle of TestRegistryLifecycle.
func TestRegistry(t *testing.T, newRegistry func(t *testing.T) spi.Registry) {
	t.Helper()
	mk := func(t *testing.T) spi.Registry {
		r := newRegistry(t)
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	run(t, "RegisterLookup", "registry", func(t *testing.T) {
		p, c := mk(t), mk(t)
		svc := regService(t)
		a := regProvider(svc, 20001, nil)
		regMust(t, p.Register(regCtx(t), a))
		regWaitLookup(t, c, regConsumer(svc, nil), []spi.URL{a})
	})
	run(t, "SubscribePushes", "registry", func(t *testing.T) {
		p, c := mk(t), mk(t)
		svc := regService(t)
		w := regSubscribe(t, c, regConsumer(svc, nil))
		w.waitFor(t, nil)
		a, b := regProvider(svc, 20001, nil), regProvider(svc, 20002, nil)
		regMust(t, p.Register(regCtx(t), a))
		w.waitFor(t, []spi.URL{a})
		regMust(t, p.Register(regCtx(t), b))
		w.waitFor(t, []spi.URL{a, b})
		regMust(t, p.Unregister(regCtx(t), a))
		w.waitFor(t, []spi.URL{b})
		regMust(t, p.Unregister(regCtx(t), b))
		w.waitFor(t, nil)
		w.checkOrder(t)
	})
	run(t, "SubscribeSeesExisting", "registry", func(t *testing.T) {
		p, c := mk(t), mk(t)
		svc := regService(t)
		a := regProvider(svc, 20001, nil)
		regMust(t, p.Register(regCtx(t), a))
		w := regSubscribe(t, c, regConsumer(svc, nil))
		w.waitFor(t, []spi.URL{a})
	})
	run(t, "CloseUnregisters", "registry", func(t *testing.T) {
		p, c := mk(t), mk(t)
		svc := regService(t)
		a, b := regProvider(svc, 20001, nil), regProvider(svc, 20002, nil)
		regMust(t, p.Register(regCtx(t), a))
		regMust(t, p.Register(regCtx(t), b))
		w := regSubscribe(t, c, regConsumer(svc, nil))
		w.waitFor(t, []spi.URL{a, b})
		regMust(t, p.Close())
		w.waitFor(t, nil)
		regMust(t, p.Close()) // idempotent
	})
	run(t, "IdempotentRegister", "registry", func(t *testing.T) {
		p, c := mk(t), mk(t)
		svc := regService(t)
		a := regProvider(svc, 20001, nil)
		regMust(t, p.Register(regCtx(t), a))
		regMust(t, p.Register(regCtx(t), a))
		regWaitLookup(t, c, regConsumer(svc, nil), []spi.URL{a})
		regMust(t, p.Unregister(regCtx(t), a))
		regWaitLookup(t, c, regConsumer(svc, nil), nil)
		regMust(t, p.Unregister(regCtx(t), a)) // unknown: no-op
	})
	run(t, "GroupVersionIsolation", "registry", func(t *testing.T) {
		p, c := mk(t), mk(t)
		svc := regService(t)
		plain := regProvider(svc, 20001, nil)
		g1 := regProvider(svc, 20002, map[string]string{spi.KeyGroup: "g1", spi.KeyVersion: "1.0"})
		regMust(t, p.Register(regCtx(t), plain))
		regMust(t, p.Register(regCtx(t), g1))
		regWaitLookup(t, c, regConsumer(svc, nil), []spi.URL{plain})
		regWaitLookup(t, c, regConsumer(svc, map[string]string{spi.KeyGroup: "g1", spi.KeyVersion: "1.0"}), []spi.URL{g1})
	})
	run(t, "ConsumerSideIsNotAProvider", "registry", func(t *testing.T) {
		p, c := mk(t), mk(t)
		svc := regService(t)
		a := regProvider(svc, 20001, nil)
		regMust(t, p.Register(regCtx(t), a))
		cons := regConsumer(svc, nil).WithScheme("consumer").WithAddress("127.0.0.1", 0)
		regMust(t, c.Register(regCtx(t), cons))
		regWaitLookup(t, c, regConsumer(svc, nil), []spi.URL{a})
		regMust(t, c.Unregister(regCtx(t), cons))
	})
	run(t, "EncodedValuesRoundTrip", "registry", func(t *testing.T) {
		p, c := mk(t), mk(t)
		svc := regService(t)
		a := regProvider(svc, 20001, map[string]string{
			"odd": "a=b&c/d%2Fe%zz x+y", "path": "/root/x?y=z", "methods": "Echo,Info",
		})
		regMust(t, p.Register(regCtx(t), a))
		regMust(t, p.Register(regCtx(t), a))
		got := regWaitLookup(t, c, regConsumer(svc, nil), []spi.URL{a})
		if v, _ := got[0].Param("odd"); v != "a=b&c/d%2Fe%zz x+y" {
			t.Fatalf("value did not round-trip: %q", v)
		}
	})
	run(t, "Services", "registry", func(t *testing.T) {
		p, c := mk(t), mk(t)
		svc := regService(t)
		a := regProvider(svc, 20001, map[string]string{spi.KeyGroup: "g"})
		key := a.ServiceKey()
		if _, err := c.Services(regCtx(t)); errors.Is(err, spi.ErrNotSupported) {
			t.Skip("registry cannot list services")
		}
		regMust(t, p.Register(regCtx(t), a))
		regWaitServices(t, c, key, true)
		regMust(t, p.Unregister(regCtx(t), a))
		regWaitServices(t, c, key, false)
	})
	run(t, "Lifecycle", "registry", func(t *testing.T) {
		TestRegistryLifecycle(t, mk(t), regConsumer(regService(t), nil))
	})
}

// TestRegistryLifecycle checks what every registry, even one without a
// backend (direct), must do: a subscription delivers a first list; Stop is
// idempotent and no notify runs after it returns; Close is idempotent and
// stops live subscriptions; Subscribe and Register after Close fail.
func TestRegistryLifecycle(t *testing.T, r spi.Registry, consumer spi.URL) {
	t.Helper()
	defer catch(t, "registry")
	w := regSubscribe(t, r, consumer)
	w.waitFirst(t)
	w.sub.Stop()
	w.sub.Stop()
	w.mu.Lock()
	w.stopped = true
	w.mu.Unlock()

	w2 := regSubscribe(t, r, consumer)
	w2.waitFirst(t)
	regMust(t, r.Close())
	w2.mu.Lock()
	w2.stopped = true // Close returned: no notify may follow
	w2.mu.Unlock()
	regMust(t, r.Close())
	w2.sub.Stop()
	if _, err := r.Subscribe(regCtx(t), consumer, func([]spi.URL) {}); err == nil {
		t.Fatal("Subscribe after Close succeeded, want an error")
	}
	if err := r.Register(regCtx(t), regProvider(consumer.Interface(), 20009, nil)); err == nil {
		t.Fatal("Register after Close succeeded, want an error")
	}
	time.Sleep(50 * time.Millisecond)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.late > 0 || w2.late > 0 {
		t.Fatalf("notify called %d times after Stop/Close returned", w.late+w2.late)
	}
}

// ---- helpers ----

func regCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), RegistryWait)
	t.Cleanup(cancel)
	return ctx
}

func regMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// serviceName derives a unique, valid service interface from the test name.
func regService(t *testing.T) string {
	var b strings.Builder
	b.WriteString("spitest.")
	for _, c := range t.Name() {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func regProvider(svc string, port int, params map[string]string) spi.URL {
	p := map[string]string{"side": "provider", "timestamp": "1700000000000", "weight": "100"}
	for k, v := range params {
		p[k] = v
	}
	u, err := spi.NewURL("airnode", "127.0.0.1", port, svc, p)
	if err != nil {
		panic(err)
	}
	return u
}

func regConsumer(svc string, params map[string]string) spi.URL {
	p := map[string]string{"side": "consumer"}
	for k, v := range params {
		p[k] = v
	}
	u, err := spi.NewURL("airnode", "127.0.0.1", 0, svc, p)
	if err != nil {
		panic(err)
	}
	return u
}

func regSort(l []spi.URL) []spi.URL {
	l = slices.Clone(l)
	slices.SortFunc(l, func(a, b spi.URL) int { return strings.Compare(a.String(), b.String()) })
	return l
}

func regSame(a, b []spi.URL) bool {
	return slices.EqualFunc(regSort(a), regSort(b), func(x, y spi.URL) bool { return x.Equal(y) })
}

func regDescribe(l []spi.URL) string {
	s := make([]string, len(l))
	for i, u := range regSort(l) {
		s[i] = u.String()
	}
	return fmt.Sprintf("%d %v", len(l), s)
}

func regWaitLookup(t *testing.T, r spi.Registry, consumer spi.URL, want []spi.URL) []spi.URL {
	t.Helper()
	deadline := time.Now().Add(RegistryWait)
	for {
		got, err := r.Lookup(regCtx(t), consumer)
		if err == nil && regSame(got, want) {
			return regSort(got)
		}
		if time.Now().After(deadline) {
			t.Fatalf("Lookup(%s) = %s, %v; want %s", consumer.ServiceKey(), regDescribe(got), err, regDescribe(want))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func regWaitServices(t *testing.T, r spi.Registry, key string, present bool) {
	t.Helper()
	deadline := time.Now().Add(RegistryWait)
	for {
		got, err := r.Services(regCtx(t))
		if err == nil && slices.Contains(got, key) == present && slices.IsSorted(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Services() = %v, %v; want %q present=%v, sorted", got, err, key, present)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// regWatcher records every list a subscription delivers.
type regWatcher struct {
	sub     spi.Subscription
	mu      sync.Mutex
	lists   [][]spi.URL
	changed chan struct{}
	busy    bool
	overlap bool
	stopped bool
	late    int
}

func regSubscribe(t *testing.T, r spi.Registry, consumer spi.URL) *regWatcher {
	t.Helper()
	w := &regWatcher{changed: make(chan struct{}, 1)}
	sub, err := r.Subscribe(regCtx(t), consumer, func(l []spi.URL) {
		w.mu.Lock()
		if w.busy {
			w.overlap = true
		}
		if w.stopped {
			w.late++
		}
		w.busy = true
		w.lists = append(w.lists, slices.Clone(l))
		w.busy = false
		w.mu.Unlock()
		select {
		case w.changed <- struct{}{}:
		default:
		}
	})
	regMust(t, err)
	w.sub = sub
	t.Cleanup(sub.Stop)
	return w
}

func (w *regWatcher) last() ([]spi.URL, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.lists) == 0 {
		return nil, 0
	}
	return w.lists[len(w.lists)-1], len(w.lists)
}

func (w *regWatcher) waitFirst(t *testing.T) {
	t.Helper()
	timer := time.NewTimer(RegistryWait)
	defer timer.Stop()
	for {
		if _, n := w.last(); n > 0 {
			return
		}
		select {
		case <-w.changed:
		case <-timer.C:
			t.Fatal("no first provider list pushed")
		}
	}
}

// waitFor waits until the newest pushed list equals want.
func (w *regWatcher) waitFor(t *testing.T, want []spi.URL) {
	t.Helper()
	timer := time.NewTimer(RegistryWait)
	defer timer.Stop()
	for {
		got, n := w.last()
		if n > 0 && regSame(got, want) {
			return
		}
		select {
		case <-w.changed:
		case <-timer.C:
			t.Fatalf("pushed list is %s after %d pushes; want %s", regDescribe(got), n, regDescribe(want))
		}
	}
}

func (w *regWatcher) checkOrder(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.overlap {
		t.Fatal("notify ran concurrently with itself")
	}
}
