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

// nearMiss caches NearMiss's last answer.
type nearMiss struct {
	mu   sync.Mutex
	busy bool // a look-up is running: other calls take the last answer
	at   time.Time
	text string
}

// NearMiss returns what the registry lists instead of the reference's
// interface, for the "no provider available" error of a reference the
// registry lists no provider of: "; the registry lists no provider of
// shop.Shopp; did you mean \"shop.Shop\"?" when an interface it lists is
// close (internal/suggest's rule), "; the registry lists no service at
// all" when it lists none, else "" (and when it cannot list its
// services: spi.ErrNotSupported, unreachable, out of time). It asks the
// registry's Services at most once per nearMissFresh, failures included,
// bounded by the shorter of ctx's remaining time and NearMissTimeout
// (NearMissTimeout when ctx has ended: the error is being reported), and
// one caller at a time: the others take the last answer at once, so
// failing calls wait at most one look-up each, not one after another
// (a registry that took the whole bound for each held 20 concurrent
// callers' errors for up to 6 s). Safe for concurrent use.
func (d *Directory) NearMiss(ctx context.Context) string {
	d.near.mu.Lock()
	if d.near.busy || !d.near.at.IsZero() && time.Since(d.near.at) < nearMissFresh {
		text := d.near.text
		d.near.mu.Unlock()
		return text
	}
	d.near.busy = true
	d.near.mu.Unlock()
	bound := NearMissTimeout
	if dl, ok := ctx.Deadline(); ok && ctx.Err() == nil {
		bound = min(bound, time.Until(dl))
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
	defer cancel()
	text := ""
	if keys, err := d.reg.Services(lctx); err == nil {
		text = d.nearMissText(keys)
	}
	d.near.mu.Lock()
	d.near.busy, d.near.at, d.near.text = false, time.Now(), text
	d.near.mu.Unlock()
	return text
}

// nearMissText is NearMiss's text for the registry's service keys.
func (d *Directory) nearMissText(keys []string) string {
	if len(keys) == 0 {
		return "; the registry lists no service at all"
	}
	iface := d.consumer.Interface()
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
