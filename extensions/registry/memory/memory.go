package memory

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/airnode/airnode/extensions/registry/internal/push"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name and URL scheme of the memory registry.
const Name = "memory"

// Builder builds memory registries; its registries share namespaces by URL
// host. The zero value is ready to use; a Builder must not be copied after
// first use.
type Builder struct {
	mu   sync.Mutex
	hubs map[string]*hub
}

// NewBuilder returns a Builder with no namespaces yet.
func NewBuilder() *Builder { return &Builder{} }

// Name returns "memory".
func (b *Builder) Name() string { return Name }

// Reach returns spi.ReachProcess: only consumers of this process (of
// this Builder's hub) find what its registries register.
func (b *Builder) Reach() spi.RegistryReach { return spi.ReachProcess }

// Build returns a registry in the namespace named by u's host. It fails for
// a scheme other than "memory" or for any parameter (the memory registry has
// none). Pure apart from creating the in-process namespace on first use.
func (b *Builder) Build(u spi.URL) (spi.Registry, error) {
	if u.Scheme() != Name {
		return nil, fmt.Errorf("memory registry: scheme %q in %q, want %q", u.Scheme(), u, Name)
	}
	if keys := u.Keys(); len(keys) > 0 {
		v, _ := u.Param(keys[0])
		return nil, &spi.KeyError{Keys: keys[:1], Values: []string{v},
			Msg: fmt.Sprintf("memory registry: unknown URL key %q in %q (the memory registry takes no parameters)", keys[0], u)}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hubs == nil {
		b.hubs = map[string]*hub{}
	}
	h := b.hubs[u.Host()]
	if h == nil {
		h = &hub{
			providers: map[string]map[string]*entry{},
			consumers: map[string]map[string]*entry{},
			subs:      map[string]map[*subscription]struct{}{},
		}
		b.hubs[u.Host()] = h
	}
	return &Registry{hub: h, desc: u.String(), registered: map[string]spi.URL{}, subs: map[*subscription]struct{}{}}, nil
}

// hub is one namespace.
type hub struct {
	mu        sync.Mutex
	providers map[string]map[string]*entry // service key -> canonical URL -> entry
	consumers map[string]map[string]*entry
	subs      map[string]map[*subscription]struct{} // service key -> subscriptions
}

type entry struct {
	url    spi.URL
	owners map[*Registry]struct{}
}

// table returns the map u belongs to (providers or consumers).
func (h *hub) table(u spi.URL) map[string]map[string]*entry {
	if u.ParamOr(spi.KeySide, "provider") == "consumer" {
		return h.consumers
	}
	return h.providers
}

// list returns the providers of key; h.mu held.
func (h *hub) list(key string) []spi.URL {
	out := make([]spi.URL, 0, len(h.providers[key]))
	for _, e := range h.providers[key] {
		out = append(out, e.url)
	}
	return out
}

// changed pushes key's list to its subscribers and returns their
// pushers; h.mu held, so pushes of one key are queued in order.
func (h *hub) changed(key string) []*push.Pusher {
	var out []*push.Pusher
	for s := range h.subs[key] {
		s.pusher.Push(h.list(key))
		out = append(out, s.pusher)
	}
	return out
}

// add records r as an owner of u and returns the pushers of the
// subscribers it changed; h.mu held.
func (h *hub) add(r *Registry, u spi.URL) []*push.Pusher {
	t := h.table(u)
	key, s := u.ServiceKey(), u.String()
	if t[key] == nil {
		t[key] = map[string]*entry{}
	}
	e := t[key][s]
	var changed []*push.Pusher
	if e == nil {
		e = &entry{url: u, owners: map[*Registry]struct{}{}}
		t[key][s] = e
		if isProvider(u) {
			changed = h.changed(key)
		}
	}
	e.owners[r] = struct{}{}
	return changed
}

// remove drops r as an owner of u and returns the pushers of the
// subscribers it changed; h.mu held.
func (h *hub) remove(r *Registry, u spi.URL) []*push.Pusher {
	t := h.table(u)
	key, s := u.ServiceKey(), u.String()
	e := t[key][s]
	if e == nil {
		return nil
	}
	delete(e.owners, r)
	if len(e.owners) > 0 {
		return nil
	}
	delete(t[key], s)
	if len(t[key]) == 0 {
		delete(t, key)
	}
	if isProvider(u) {
		return h.changed(key)
	}
	return nil
}

// deliveryWait bounds how long Register and Unregister wait for the
// subscribers they changed to have applied the new provider list
// (awaitDelivery): a subscriber's notify runs for microseconds, so the
// bound matters only for one that blocks.
const deliveryWait = time.Second

// awaitDelivery waits until each of pushers has delivered what it was
// pushed (push.Pusher.Wait), for at most deliveryWait or until ctx ends.
// Registry locks must not be held: a subscriber's notify may call the
// registry (Lookup, Services).
func awaitDelivery(ctx context.Context, pushers []*push.Pusher) {
	if len(pushers) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, deliveryWait)
	defer cancel()
	for _, p := range pushers {
		if !p.Wait(ctx) {
			return
		}
	}
}

func isProvider(u spi.URL) bool { return u.ParamOr(spi.KeySide, "provider") != "consumer" }

var errClosed = errors.New("memory registry: closed")

// Registry is one client of a memory namespace.
type Registry struct {
	hub  *hub
	desc string

	mu         sync.Mutex // guards the fields below; taken before hub.mu
	registered map[string]spi.URL
	subs       map[*subscription]struct{}
	closed     bool
}

// Register publishes u in the namespace; registering it twice is a no-op.
// It returns once every subscriber of u's service key has applied the
// new provider list (its notify returned), so that a consumer of the
// same namespace lists a provider as soon as the provider's Export has
// returned (otherwise a call right after Export could find no provider); that
// wait is bounded by ctx and by deliveryWait (1s), after which Register
// returns nil all the same. It must not be called from inside a notify
// of this namespace's subscriptions of u's key (it would wait the bound
// out).
func (r *Registry) Register(ctx context.Context, u spi.URL) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return errClosed
	}
	if _, ok := r.registered[u.String()]; ok {
		r.mu.Unlock()
		return nil
	}
	r.registered[u.String()] = u
	r.hub.mu.Lock()
	changed := r.hub.add(r, u)
	r.hub.mu.Unlock()
	r.mu.Unlock()
	awaitDelivery(ctx, changed)
	return nil
}

// Unregister withdraws u if this registry registered it, and returns
// once the subscribers of its service key have applied the list without
// it, as Register waits.
func (r *Registry) Unregister(ctx context.Context, u spi.URL) error {
	r.mu.Lock()
	if _, ok := r.registered[u.String()]; !ok {
		r.mu.Unlock()
		return nil
	}
	delete(r.registered, u.String())
	r.hub.mu.Lock()
	changed := r.hub.remove(r, u)
	r.hub.mu.Unlock()
	r.mu.Unlock()
	awaitDelivery(ctx, changed)
	return nil
}

// Subscribe pushes the providers of consumer.ServiceKey() now and after
// every change.
func (r *Registry) Subscribe(_ context.Context, consumer spi.URL, notify spi.NotifyFunc) (spi.Subscription, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	key := consumer.ServiceKey()
	s := &subscription{reg: r, key: key, pusher: push.New(notify)}
	r.subs[s] = struct{}{}
	r.hub.mu.Lock()
	if r.hub.subs[key] == nil {
		r.hub.subs[key] = map[*subscription]struct{}{}
	}
	r.hub.subs[key][s] = struct{}{}
	s.pusher.Push(r.hub.list(key))
	r.hub.mu.Unlock()
	return s, nil
}

// Lookup returns the current providers of consumer.ServiceKey(), sorted.
func (r *Registry) Lookup(_ context.Context, consumer spi.URL) ([]spi.URL, error) {
	r.hub.mu.Lock()
	list := r.hub.list(consumer.ServiceKey())
	r.hub.mu.Unlock()
	push.Sort(list)
	return list, nil
}

// Services returns the service keys with at least one provider, sorted.
func (r *Registry) Services(context.Context) ([]string, error) {
	r.hub.mu.Lock()
	keys := make([]string, 0, len(r.hub.providers))
	for k := range r.hub.providers {
		keys = append(keys, k)
	}
	r.hub.mu.Unlock()
	sort.Strings(keys)
	return keys, nil
}

// Close unregisters everything r registered and stops its subscriptions;
// idempotent.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.hub.mu.Lock()
	for _, u := range r.registered {
		r.hub.remove(r, u)
	}
	r.hub.mu.Unlock()
	r.registered = nil
	subs := r.subs
	r.subs = nil
	r.mu.Unlock()
	for s := range subs {
		s.stop()
	}
	return nil
}

// String returns the registry URL, for messages.
func (r *Registry) String() string { return r.desc }

type subscription struct {
	reg    *Registry
	key    string
	pusher *push.Pusher
	once   sync.Once
}

// Stop ends the subscription and waits until notify is not running.
func (s *subscription) Stop() {
	s.reg.mu.Lock()
	delete(s.reg.subs, s)
	s.reg.mu.Unlock()
	s.stop()
}

func (s *subscription) stop() {
	s.once.Do(func() {
		h := s.reg.hub
		h.mu.Lock()
		delete(h.subs[s.key], s)
		if len(h.subs[s.key]) == 0 {
			delete(h.subs, s.key)
		}
		h.mu.Unlock()
	})
	s.pusher.Stop()
}

var (
	_ spi.RegistryBuilder = (*Builder)(nil)
	_ spi.RegistryReacher = (*Builder)(nil)
	_ spi.Registry        = (*Registry)(nil)
	_ spi.Subscription    = (*subscription)(nil)
)
