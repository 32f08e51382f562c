// Package staticregistry is an example third-party registry served as an
// airnode plugin: a read-only list of provider URLs kept in a text file, one
// URL per line ('#' starts a comment). Consumers look providers up by
// service key and are pushed the new list when the file changes.
//
// Registered name and URL scheme: "static" (static:///etc/airnode/providers.txt).
// URL keys:
//
//	key       type      unit  default  bounds
//	interval  duration  -     500ms    10ms..1h; how often the file is re-read
//
// Register and Unregister return spi.ErrNotSupported: providers are listed
// by whoever writes the file, and the builder says so (ReadOnly, the
// spi.ReadOnlyRegistry the sdk forwards), so that `airnode serve` refuses
// the registry before it listens. Safe for concurrent use; Close stops every
// subscription.
package staticregistry

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/airnode/airnode/spi"
)

// Name is the extension name and URL scheme.
const Name = "static"

// Builder builds static registries. The zero value is ready.
type Builder struct{}

// Name returns "static".
func (Builder) Name() string { return Name }

// ReadOnly reports true: the registry lists providers for consumers but
// cannot register any (spi.ReadOnlyRegistry). Served as a plugin, the sdk
// sends it to the host at start, and `airnode serve --registry static://...`
// exits 1 before it listens ("is a read-only registry").
func (Builder) ReadOnly() bool { return true }

// Build validates u (an absolute file path, the interval key). Pure.
func (Builder) Build(u spi.URL) (spi.Registry, error) {
	path := "/" + u.Path()
	if u.Path() == "" {
		return nil, fmt.Errorf("static: %s names no file (want static:///path/to/providers.txt)", u)
	}
	interval, err := u.Duration("interval", 500*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("static: %w", err)
	}
	if interval < 10*time.Millisecond || interval > time.Hour {
		return nil, fmt.Errorf("static: interval %v out of range 10ms..1h", interval)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Registry{path: path, interval: interval, ctx: ctx, cancel: cancel}, nil
}

// Registry reads providers from one file.
type Registry struct {
	path     string
	interval time.Duration
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	closed   bool
}

// read returns every provider URL in the file.
func (r *Registry) read() ([]spi.URL, error) {
	f, err := os.Open(r.path)
	if err != nil {
		return nil, fmt.Errorf("static: %w", err)
	}
	defer f.Close()
	var out []spi.URL
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		u, err := spi.Parse(line)
		if err != nil {
			return nil, fmt.Errorf("static: %s:%d: %w", r.path, n, err)
		}
		out = append(out, u)
	}
	return out, sc.Err()
}

func (r *Registry) providers(consumer spi.URL) ([]spi.URL, error) {
	all, err := r.read()
	if err != nil {
		return nil, err
	}
	key := consumer.ServiceKey()
	out := []spi.URL{}
	for _, u := range all {
		if u.ServiceKey() == key {
			out = append(out, u)
		}
	}
	return out, nil
}

// Register is not supported: the file lists the providers.
func (r *Registry) Register(context.Context, spi.URL) error { return spi.ErrNotSupported }

// Unregister is not supported.
func (r *Registry) Unregister(context.Context, spi.URL) error { return spi.ErrNotSupported }

// Lookup returns the providers of consumer's service key listed now.
func (r *Registry) Lookup(_ context.Context, consumer spi.URL) ([]spi.URL, error) {
	return r.providers(consumer)
}

// Services lists the service keys in the file, sorted.
func (r *Registry) Services(context.Context) ([]string, error) {
	all, err := r.read()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range all {
		if k := u.ServiceKey(); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Subscribe pushes the current list now, then again whenever it changes.
// An unreadable file is skipped (the last list stands).
func (r *Registry) Subscribe(_ context.Context, consumer spi.URL, notify spi.NotifyFunc) (spi.Subscription, error) {
	first, err := r.providers(consumer)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errors.New("static: registry closed")
	}
	ctx, cancel := context.WithCancel(r.ctx)
	s := &subscription{cancel: cancel, done: make(chan struct{})}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(s.done)
		notify(first)
		last := first
		t := time.NewTicker(r.interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			l, err := r.providers(consumer)
			if err != nil || slices.EqualFunc(l, last, spi.URL.Equal) {
				continue
			}
			last = l
			notify(l)
		}
	}()
	return s, nil
}

type subscription struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func (s *subscription) Stop() { s.cancel(); <-s.done }

// Close stops every subscription and waits for them. Idempotent.
func (r *Registry) Close() error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	return nil
}

var (
	_ spi.RegistryBuilder  = Builder{}
	_ spi.ReadOnlyRegistry = Builder{}
	_ spi.Registry         = (*Registry)(nil)
)
