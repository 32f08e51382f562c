package directory

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/airnode/airnode/internal/suggest"
)

// NearMissTimeout bounds NearMiss's look-up in the registry: the call's
// error waits at most this long for it (less when the call's ctx has
// less left).
const NearMissTimeout = 300 * time.Millisecond

// nearMissFresh is how long NearMiss reuses its last answer, so that a
// loop of failing calls does not list the registry on every call.
const nearMissFresh = time.Second

// nearMiss caches NearMiss's last look-up.
type nearMiss struct {
	mu   sync.Mutex
	busy bool // a look-up is running: other calls take the last answer
	at   time.Time
	ok   bool     // the registry listed its services
	keys []string // the service keys it listed
}

// NearMiss returns what the registry lists instead of the reference's
// interface, for the "no provider available" error of a call of method
// (its METHOD argument) through a reference the registry lists no
// provider of: when the registry lists a service whose interface is
// method (the call's service and method swapped: `call g/Echo:1.0
// demo.Echo`), "; the registry lists no provider of Echo; did you mean
// service \"g/demo.Echo:1.0\", method \"Echo\"?", the reference's group
// and version kept when the registry lists that key, else its first such
// key; else "; the registry lists no provider of shop.Shopp; did you
// mean \"shop.Shop\"?" when an interface it lists is close
// (internal/suggest's rule), "; the registry lists no service at all"
// when it lists none, else "" (and when it cannot list its services:
// spi.ErrNotSupported, unreachable, out of time). It asks the registry's
// Services at most once per nearMissFresh, failures included, bounded by
// the shorter of ctx's remaining time and NearMissTimeout
// (NearMissTimeout when ctx has ended: the error is being reported), and
// one caller at a time: the others take the last answer at once, so
// failing calls wait at most one look-up each, not one after another
// (a registry that took the whole bound for each held 20 concurrent
// callers' errors for up to 6 s). Safe for concurrent use.
func (d *Directory) NearMiss(ctx context.Context, method string) string {
	d.near.mu.Lock()
	if d.near.busy || !d.near.at.IsZero() && time.Since(d.near.at) < nearMissFresh {
		ok, keys := d.near.ok, d.near.keys
		d.near.mu.Unlock()
		if !ok {
			return ""
		}
		return d.nearMissText(keys, method)
	}
	d.near.busy = true
	d.near.mu.Unlock()
	bound := NearMissTimeout
	if dl, ok := ctx.Deadline(); ok && ctx.Err() == nil {
		bound = min(bound, time.Until(dl))
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
	defer cancel()
	keys, err := d.reg.Services(lctx)
	d.near.mu.Lock()
	d.near.busy, d.near.at, d.near.ok, d.near.keys = false, time.Now(), err == nil, keys
	d.near.mu.Unlock()
	if err != nil {
		return ""
	}
	return d.nearMissText(keys, method)
}

// nearMissText is NearMiss's text for the registry's service keys and
// the call's method.
func (d *Directory) nearMissText(keys []string, method string) string {
	if len(keys) == 0 {
		return "; the registry lists no service at all"
	}
	iface := d.consumer.Interface()
	if k, m := swappedKey(d.consumer.ServiceKey(), method, keys); k != "" {
		return fmt.Sprintf("; the registry lists no provider of %s; did you mean service %q, method %q?", iface, k, m)
	}
	var ifaces []string
	for _, k := range keys {
		if _, i, _ := splitServiceKey(k); i != iface {
			ifaces = append(ifaces, i)
		}
	}
	if m := suggest.Closest(iface, ifaces); m != "" {
		return fmt.Sprintf("; the registry lists no provider of %s; did you mean %q?", iface, m)
	}
	return ""
}

// swappedKey returns the service key among keys that a call of method
// through the reference key most likely meant when its service and method
// are swapped, and the method meant (key's interface): a key whose
// interface is method, key's group and version kept when keys hold that
// one, else the first in sorted order; "" when none is, or method is
// key's interface. key may come from a reference whose interface is a
// whole key (airnode:///g/Echo:1.0).
func swappedKey(key, method string, keys []string) (string, string) {
	group, iface, version := splitServiceKey(key)
	if method == "" || method == iface {
		return "", ""
	}
	first := ""
	for _, k := range keys {
		g, i, v := splitServiceKey(k)
		switch {
		case i != method:
		case g == group && v == version:
			return k, iface
		case first == "" || k < first:
			first = k
		}
	}
	if first == "" {
		return "", ""
	}
	return first, iface
}
