package directory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/airnode/airnode/internal/groupversion"
	"github.com/airnode/airnode/spi"
)

// valueSet is what a consumer's group or version accepts: one value ("",
// no group, is a value), a list (Dubbo's "a,b"), or any ("*"); the rule
// is internal/groupversion's, which the zookeeper registry applies too.
type valueSet = groupversion.Set

// parseSet reads a consumer's group or version value (groupversion.Parse).
func parseSet(key, v string) (valueSet, error) { return groupversion.Parse(key, v) }

// CheckGroupVersion returns an error when consumer's group or version is
// neither one value, a comma-separated list (Dubbo's multi-group
// reference, "a,b") nor "*" alone (Dubbo's any): an empty item ("a,,b")
// or a pattern ("a*"). Start refuses such a URL with it.
func CheckGroupVersion(consumer spi.URL) error {
	for _, key := range []string{spi.KeyGroup, spi.KeyVersion} {
		if _, err := parseSet(key, consumer.ParamOr(key, "")); err != nil {
			return err
		}
	}
	return nil
}

// Multi reports whether consumer's group or version names more than one
// service key: "*" or a list. Such a reference's providers are of several
// service keys, so each call must name its provider's (the provider's
// group/interface:version), not the reference's.
func Multi(consumer spi.URL) bool {
	for _, key := range []string{spi.KeyGroup, spi.KeyVersion} {
		if s, err := parseSet(key, consumer.ParamOr(key, "")); err == nil && s.Multi() {
			return true
		}
	}
	return false
}

// ServiceKeys returns the consumer URLs of the service keys consumer takes
// from reg, one per key, as a directory subscribes to them: consumer
// itself when it names one group and one version; every pair of its
// listed groups and versions (group=a,b); with "*", those of reg's
// Services of its interface that fit. For tools that look providers up
// without a directory (registry ls, list --explain). Errors are
// CheckGroupVersion's and, with "*", the listing's.
func ServiceKeys(ctx context.Context, reg spi.Registry, registryDesc string, consumer spi.URL) ([]spi.URL, error) {
	if !Multi(consumer) {
		return []spi.URL{consumer}, CheckGroupVersion(consumer)
	}
	groups, err := parseSet(spi.KeyGroup, consumer.ParamOr(spi.KeyGroup, ""))
	if err != nil {
		return nil, err
	}
	versions, err := parseSet(spi.KeyVersion, consumer.ParamOr(spi.KeyVersion, ""))
	if err != nil {
		return nil, err
	}
	d := &Directory{consumer: consumer, reg: reg, desc: registryDesc, groups: groups, versions: versions}
	return d.wantKeys(ctx)
}

// RescanInterval is how often a directory whose group or version is "*"
// asks its registry for the service keys of its interface (Services), to
// subscribe to those that appeared since: a provider of a new group joins
// such a reference within about this long. Registries push the providers
// of one service key and none pushes new keys, hence the poll (one
// listing per interval: a directory read for ZooKeeper, a readdir for
// the file registry).
const RescanInterval = 2 * time.Second

// keyURL returns the consumer URL of one service key: the consumer's
// with group g and version v ("" for none).
func (d *Directory) keyURL(g, v string) spi.URL {
	u := d.consumer
	for _, kv := range [][2]string{{spi.KeyGroup, g}, {spi.KeyVersion, v}} {
		if kv[1] == "" {
			u = u.Without(kv[0])
		} else {
			u = u.With(kv[0], kv[1])
		}
	}
	return u
}

// wantKeys returns the consumer URLs of the service keys the reference
// takes: every pair of its groups and versions, or, when either is any,
// those of the registry's service keys of its interface that fit.
func (d *Directory) wantKeys(ctx context.Context) ([]spi.URL, error) {
	var out []spi.URL
	if !d.groups.Any() && !d.versions.Any() {
		for _, g := range d.groups.Values() {
			for _, v := range d.versions.Values() {
				out = append(out, d.keyURL(g, v))
			}
		}
		return out, nil
	}
	keys, err := d.reg.Services(ctx)
	if err != nil {
		if errors.Is(err, spi.ErrNotSupported) {
			return nil, fmt.Errorf("%s: registry %s cannot list its service keys, which * needs: name the groups and versions (group=a,b)", d.anyKeys(), d.desc)
		}
		return nil, fmt.Errorf("list the service keys of %s for %s: %w", d.desc, d.anyKeys(), err)
	}
	iface := d.consumer.Interface()
	for _, k := range keys {
		g, i, v := splitServiceKey(k)
		if i == iface && d.groups.Has(g) && d.versions.Has(v) {
			out = append(out, d.keyURL(g, v))
		}
	}
	return out, nil
}

// anyKeys says which of group and version is "*": "group=*", "version=*"
// or both.
func (d *Directory) anyKeys() string {
	var s []string
	if d.groups.Any() {
		s = append(s, spi.KeyGroup+"=*")
	}
	if d.versions.Any() {
		s = append(s, spi.KeyVersion+"=*")
	}
	return strings.Join(s, " and ")
}

// startMulti subscribes to every service key wantKeys returns and
// returns after each has pushed its first list (applied together as one
// list); with "*" it then starts the rescan goroutine. On error it stops
// what it subscribed.
func (d *Directory) startMulti(ctx context.Context) error {
	urls, err := d.wantKeys(ctx)
	if err != nil {
		return fmt.Errorf("directory %s: %w", d.consumer.ServiceKey(), err)
	}
	d.pushMu.Lock()
	d.lists = map[string][]spi.URL{}
	d.waiting = map[string]bool{}
	for _, u := range urls {
		d.waiting[u.ServiceKey()] = true
	}
	none := len(urls) == 0
	d.pushMu.Unlock()
	for _, u := range urls {
		if err := d.subscribeKey(ctx, u); err != nil {
			d.stopMulti()
			return err
		}
	}
	if none {
		d.pushMu.Lock()
		d.update(nil) // no key yet: the first list is empty
		d.pushMu.Unlock()
	}
	select {
	case <-d.first:
	case <-ctx.Done():
		d.stopMulti()
		return fmt.Errorf("directory %s: no provider list from %s yet: %w", d.consumer.ServiceKey(), d.desc, ctx.Err())
	}
	if d.groups.Any() || d.versions.Any() {
		d.mu.Lock()
		if !d.closed {
			d.rescanQuit, d.rescanDone = make(chan struct{}), make(chan struct{})
			go d.rescan(d.rescanQuit, d.rescanDone)
		}
		d.mu.Unlock()
	}
	return nil
}

// subscribeKey subscribes to the service key of u (a keyURL), once.
func (d *Directory) subscribeKey(ctx context.Context, u spi.URL) error {
	key := u.ServiceKey()
	d.mu.Lock()
	_, dup := d.subs[key]
	d.mu.Unlock()
	if dup {
		return nil
	}
	sub, err := d.reg.Subscribe(ctx, u, func(l []spi.URL) { d.keyUpdate(key, l) })
	if err != nil {
		return fmt.Errorf("directory %s: subscribe to %s in %s: %w", d.consumer.ServiceKey(), key, d.desc, err)
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		sub.Stop()
		return fmt.Errorf("directory %s: closed", d.consumer.ServiceKey())
	}
	if d.subs == nil {
		d.subs = map[string]spi.Subscription{}
	}
	d.subs[key] = sub
	d.mu.Unlock()
	d.log.Debug("subscribed", "key", key)
	return nil
}

// keyUpdate records the list one service key pushed and applies the
// union of every key's list, once every key of the start has pushed its
// first; serialised by pushMu, so the lists are applied in order.
func (d *Directory) keyUpdate(key string, l []spi.URL) {
	d.pushMu.Lock()
	defer d.pushMu.Unlock()
	d.lists[key] = l
	delete(d.waiting, key)
	if len(d.waiting) > 0 {
		return
	}
	keys := make([]string, 0, len(d.lists))
	for k := range d.lists {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var all []spi.URL
	for _, k := range keys {
		all = append(all, d.lists[k]...)
	}
	d.update(all)
}

// rescan subscribes, every RescanInterval, to the service keys of the
// interface that appeared in the registry, until quit is closed.
func (d *Directory) rescan(quit, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(RescanInterval)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), RescanInterval)
		urls, err := d.wantKeys(ctx)
		if err != nil {
			d.log.Debug("rescan", "err", err)
		}
		for _, u := range urls {
			select {
			case <-quit:
				cancel()
				return
			default:
			}
			if err := d.subscribeKey(ctx, u); err != nil {
				d.log.Warn("cannot subscribe to a new service key", "key", u.ServiceKey(), "err", err)
			}
		}
		cancel()
	}
}

// stopMulti stops the rescan goroutine and every subscription, waiting
// for them.
func (d *Directory) stopMulti() {
	d.mu.Lock()
	quit, done := d.rescanQuit, d.rescanDone
	d.rescanQuit, d.rescanDone = nil, nil
	subs := d.subs
	d.subs = nil
	d.mu.Unlock()
	if quit != nil {
		close(quit)
		<-done
	}
	// the rescan goroutine has ended: no subscription is added any more
	d.mu.Lock()
	for k, s := range d.subs {
		if subs == nil {
			subs = map[string]spi.Subscription{}
		}
		subs[k] = s
	}
	d.subs = nil
	d.mu.Unlock()
	for _, s := range subs {
		s.Stop()
	}
}
