package direct

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"

	"github.com/airnode/airnode/extensions/registry/internal/push"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name of the direct registry.
const Name = "direct"

// KeyProtocol names the scheme of provider URLs built from a "direct://" URL.
const KeyProtocol = "protocol"

// DefaultProtocol is the default of KeyProtocol.
const DefaultProtocol = "airnode"

// Builder builds direct registries. The zero value is ready.
type Builder struct{}

// Name returns "direct".
func (Builder) Name() string { return Name }

// Reach returns spi.ReachNone: Register publishes nothing; consumers name
// their providers in the URL.
func (Builder) Reach() spi.RegistryReach { return spi.ReachNone }

// Build validates u's addresses: each must have a host and a port 1-65535.
// Pure.
func (Builder) Build(u spi.URL) (spi.Registry, error) {
	r := &Registry{desc: u.String(), subs: map[*subscription]struct{}{}}
	protocol := DefaultProtocol
	if u.Scheme() == Name {
		protocol = u.ParamOr(KeyProtocol, DefaultProtocol)
		if protocol == "" {
			return nil, fmt.Errorf("direct registry: empty value for URL key %q in %q", KeyProtocol, u)
		}
	} else {
		protocol = u.Scheme()
	}
	if err := u.CheckBackup(); err != nil {
		return nil, fmt.Errorf("direct registry: %w", err)
	}
	for _, a := range u.Addresses() {
		host, port, err := splitAddr(a)
		if err != nil {
			return nil, fmt.Errorf("direct registry: %w in %q", err, u)
		}
		if host == "" && port == 0 {
			continue // "direct://": addresses come from the consumer
		}
		r.addrs = append(r.addrs, addr{host, port})
	}
	r.protocol = protocol
	return r, nil
}

type addr struct {
	host string
	port int
}

func splitAddr(a string) (string, int, error) {
	host, p, err := net.SplitHostPort(a)
	if err != nil {
		return "", 0, fmt.Errorf("bad provider address %q", a)
	}
	port, _ := strconv.Atoi(p)
	if host == "" && port == 0 {
		return "", 0, nil
	}
	if host == "" || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("provider address %q needs a host and a port 1-65535", a)
	}
	return host, port, nil
}

var errClosed = errors.New("direct registry: closed")

// Registry is a fixed provider list.
type Registry struct {
	desc     string
	protocol string
	addrs    []addr

	mu     sync.Mutex
	subs   map[*subscription]struct{}
	closed bool
}

// Register is a no-op: a direct provider is found by its address. It fails
// only after Close.
func (r *Registry) Register(context.Context, spi.URL) error { return r.check() }

// Unregister is a no-op.
func (r *Registry) Unregister(context.Context, spi.URL) error { return nil }

func (r *Registry) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errClosed
	}
	return nil
}

// providerOwnKeys are the keys each provider sets for itself and a
// consumer reads from the provider's URL only (spi.MergeURL keeps the
// provider's value): the consumer's value is not its providers', so the
// provider URLs leave it out. Copied, a reference's weight=0 made every
// provider unpickable ("all 1 providers have weight 0") while Refer
// says the key has no effect on a reference.
var providerOwnKeys = []string{"weight", "warmup", "timestamp"}

// providers builds the provider list for consumer.
func (r *Registry) providers(consumer spi.URL) ([]spi.URL, error) {
	addrs := r.addrs
	protocol := r.protocol
	if len(addrs) == 0 {
		for _, a := range consumer.Addresses() {
			host, port, err := splitAddr(a)
			if err != nil {
				return nil, fmt.Errorf("direct registry: consumer %q: %w", consumer, err)
			}
			if host != "" {
				addrs = append(addrs, addr{host, port})
			}
		}
	}
	base := consumer.Without(append([]string{spi.KeySide, spi.KeyBackup}, providerOwnKeys...)...).WithScheme(protocol)
	out := make([]spi.URL, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, base.WithAddress(a.host, a.port))
	}
	return out, nil
}

// Subscribe pushes the fixed provider list once.
func (r *Registry) Subscribe(_ context.Context, consumer spi.URL, notify spi.NotifyFunc) (spi.Subscription, error) {
	list, err := r.providers(consumer)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	s := &subscription{reg: r, pusher: push.New(notify)}
	r.subs[s] = struct{}{}
	s.pusher.Push(list)
	return s, nil
}

// Lookup returns the fixed provider list for consumer.
func (r *Registry) Lookup(_ context.Context, consumer spi.URL) ([]spi.URL, error) {
	list, err := r.providers(consumer)
	push.Sort(list)
	return list, err
}

// Services returns spi.ErrNotSupported: a direct registry knows addresses,
// not services.
func (r *Registry) Services(context.Context) ([]string, error) { return nil, spi.ErrNotSupported }

// Close stops every subscription; idempotent.
func (r *Registry) Close() error {
	r.mu.Lock()
	r.closed = true
	subs := r.subs
	r.subs = map[*subscription]struct{}{}
	r.mu.Unlock()
	for s := range subs {
		s.pusher.Stop()
	}
	return nil
}

// String returns the URL the registry was built from.
func (r *Registry) String() string { return r.desc }

type subscription struct {
	reg    *Registry
	pusher *push.Pusher
}

// Stop ends the subscription; idempotent.
func (s *subscription) Stop() {
	s.reg.mu.Lock()
	delete(s.reg.subs, s)
	s.reg.mu.Unlock()
	s.pusher.Stop()
}

var (
	_ spi.RegistryBuilder = Builder{}
	_ spi.RegistryReacher = Builder{}
	_ spi.Registry        = (*Registry)(nil)
	_ spi.Subscription    = (*subscription)(nil)
)
