package spitest

import (
	"errors"
	"testing"

	"github.com/airnode/airnode/spi"
)

// TestReadOnlyRegistry runs the read-only subset of the registry
// conformance suite, for a registry that discovers providers but does not
// register them (spi.ReadOnlyRegistry: a static list, a plugin fronting a
// service catalogue), which TestRegistry cannot check since every one of
// its tests registers. newRegistry is as for TestRegistry. publish makes
// the registries' backend list exactly providers, replacing what an
// earlier call listed (the test's own fixture: it writes the file the
// registry reads, fills the catalogue); calls come one at a time.
//
// Covered: Register answers spi.ErrNotSupported and Unregister that or
// nil; lookup of what is published; subscribe pushes on add, change and
// removal, in order and never concurrently; a subscription sees what was
// published before it; group/version isolation; URLs whose values hold
// '=', '&', '/', '%' round-trip; Services listing (skipped when the
// registry returns spi.ErrNotSupported); and the lifecycle of
// TestRegistryLifecycle.
//
// With publish nil only what needs no backend change runs: Register
// refused, an unknown service looked up and subscribed to gives an empty
// list, and the lifecycle. `airnode plugin check --registry-url` runs
// that for a read-only registry plugin.
func TestReadOnlyRegistry(t *testing.T, newRegistry func(t *testing.T) spi.Registry, publish func(t *testing.T, providers []spi.URL)) {
	t.Helper()
	mk := func(t *testing.T) spi.Registry {
		r := newRegistry(t)
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	pub := func(t *testing.T, providers ...spi.URL) {
		t.Helper()
		publish(t, providers)
	}
	run(t, "RegisterNotSupported", "registry", func(t *testing.T) {
		r := mk(t)
		a := regProvider(regService(t), 20001, nil)
		if err := r.Register(regCtx(t), a); !errors.Is(err, spi.ErrNotSupported) {
			t.Fatalf("Register = %v; want spi.ErrNotSupported from a read-only registry", err)
		}
		if err := r.Unregister(regCtx(t), a); err != nil && !errors.Is(err, spi.ErrNotSupported) {
			t.Fatalf("Unregister = %v; want nil or spi.ErrNotSupported from a read-only registry", err)
		}
	})
	run(t, "UnknownServiceIsEmpty", "registry", func(t *testing.T) {
		r := mk(t)
		c := regConsumer(regService(t), nil)
		regWaitLookup(t, r, c, nil)
		regSubscribe(t, r, c).waitFor(t, nil)
	})
	if publish != nil {
		run(t, "Lookup", "registry", func(t *testing.T) {
			r := mk(t)
			svc := regService(t)
			a, b := regProvider(svc, 20001, nil), regProvider(svc, 20002, nil)
			pub(t, a, b)
			regWaitLookup(t, r, regConsumer(svc, nil), []spi.URL{a, b})
			pub(t, b)
			regWaitLookup(t, r, regConsumer(svc, nil), []spi.URL{b})
		})
		run(t, "SubscribePushes", "registry", func(t *testing.T) {
			r := mk(t)
			svc := regService(t)
			pub(t)
			w := regSubscribe(t, r, regConsumer(svc, nil))
			w.waitFor(t, nil)
			a, b := regProvider(svc, 20001, nil), regProvider(svc, 20002, nil)
			pub(t, a)
			w.waitFor(t, []spi.URL{a})
			pub(t, a, b)
			w.waitFor(t, []spi.URL{a, b})
			pub(t, b)
			w.waitFor(t, []spi.URL{b})
			pub(t)
			w.waitFor(t, nil)
			w.checkOrder(t)
		})
		run(t, "SubscribeSeesExisting", "registry", func(t *testing.T) {
			r := mk(t)
			svc := regService(t)
			a := regProvider(svc, 20001, nil)
			pub(t, a)
			regSubscribe(t, r, regConsumer(svc, nil)).waitFor(t, []spi.URL{a})
		})
		run(t, "GroupVersionIsolation", "registry", func(t *testing.T) {
			r := mk(t)
			svc := regService(t)
			plain := regProvider(svc, 20001, nil)
			g1 := regProvider(svc, 20002, map[string]string{spi.KeyGroup: "g1", spi.KeyVersion: "1.0"})
			pub(t, plain, g1)
			regWaitLookup(t, r, regConsumer(svc, nil), []spi.URL{plain})
			regWaitLookup(t, r, regConsumer(svc, map[string]string{spi.KeyGroup: "g1", spi.KeyVersion: "1.0"}), []spi.URL{g1})
		})
		run(t, "EncodedValuesRoundTrip", "registry", func(t *testing.T) {
			r := mk(t)
			svc := regService(t)
			a := regProvider(svc, 20001, map[string]string{
				"odd": "a=b&c/d%2Fe%zz x+y", "path": "/root/x?y=z", "methods": "Echo,Info",
			})
			pub(t, a)
			got := regWaitLookup(t, r, regConsumer(svc, nil), []spi.URL{a})
			if v, _ := got[0].Param("odd"); v != "a=b&c/d%2Fe%zz x+y" {
				t.Fatalf("value did not round-trip: %q", v)
			}
		})
		run(t, "Services", "registry", func(t *testing.T) {
			r := mk(t)
			a := regProvider(regService(t), 20001, map[string]string{spi.KeyGroup: "g"})
			if _, err := r.Services(regCtx(t)); errors.Is(err, spi.ErrNotSupported) {
				t.Skip("registry cannot list services")
			}
			pub(t, a)
			regWaitServices(t, r, a.ServiceKey(), true)
			pub(t)
			regWaitServices(t, r, a.ServiceKey(), false)
		})
	}
	run(t, "Lifecycle", "registry", func(t *testing.T) {
		TestRegistryLifecycle(t, mk(t), regConsumer(regService(t), nil))
	})
}
