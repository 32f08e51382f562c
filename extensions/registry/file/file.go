package file

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/airnode/airnode/extensions/registry/internal/push"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name and URL scheme of the file registry.
const Name = "file"

// Category directories under a service's directory (Dubbo's names).
const (
	Providers = "providers"
	Consumers = "consumers"
)

// maxName is the longest entry name written as the encoded URL itself.
const maxName = 200

// staleTemp is the age after which an unlocked temporary file is removed.
const staleTemp = 10 * time.Second

// Builder builds file registries. The zero value is ready.
type Builder struct {
	// Logger receives the registry's log lines; nil means slog.Default().
	Logger *slog.Logger
}

// Name returns "file".
func (Builder) Name() string { return Name }

// Reach returns spi.ReachShared: every process of the machine using the
// same directory finds what is registered.
func (Builder) Reach() spi.RegistryReach { return spi.ReachShared }

// Build validates u (see the package doc for its keys). Pure: the directory
// is created on first use.
func (b Builder) Build(u spi.URL) (spi.Registry, error) {
	p, err := parseParams(u)
	if err != nil {
		return nil, err
	}
	log := b.Logger
	if log == nil {
		log = slog.Default()
	}
	desc := u.String()
	if u.Path() == "" {
		desc += " (" + p.dir + ")" // the default directory depends on the environment
	}
	return &Registry{
		p:      p,
		desc:   desc,
		log:    log.With("registry", "file://"+p.dir),
		leases: map[string]*lease{},
		subs:   map[*subscription]struct{}{},
		quit:   make(chan struct{}),
	}, nil
}

var errClosed = errors.New("file registry: closed")

// Registry is one process's handle on a registry directory.
type Registry struct {
	p    params
	desc string
	log  *slog.Logger

	mu      sync.Mutex
	leases  map[string]*lease // canonical URL -> held entry
	subs    map[*subscription]struct{}
	watcher *fsnotify.Watcher
	watched map[string]map[*subscription]struct{} // directory -> subscriptions
	closed  bool
	keeping bool

	quit chan struct{}  // closed by Close: stops the keeper and the watch loop
	wg   sync.WaitGroup // keeper and watch loop
}

// lease is a registered entry: the open, flocked file and its path.
type lease struct {
	url  spi.URL
	path string
	f    *os.File
}

// Dir returns the registry directory.
func (r *Registry) Dir() string { return r.p.dir }

// String returns the registry URL, for messages; a URL naming no
// directory is followed by the default directory it uses:
// "file:// (/run/user/1000/airnode/registry)".
func (r *Registry) String() string { return r.desc }

func escape(s string) string { return url.QueryEscape(s) }

func category(u spi.URL) string {
	if u.ParamOr(spi.KeySide, "") == "consumer" {
		return Consumers
	}
	return Providers
}

func (r *Registry) categoryDir(serviceKey, cat string) string {
	return filepath.Join(r.p.dir, escape(serviceKey), cat)
}

// entryName is the file name of u's entry.
func entryName(u spi.URL) string {
	n := escape(u.String())
	if len(n) > maxName {
		sum := sha256.Sum256([]byte(u.String()))
		n = "h-" + hex.EncodeToString(sum[:20])
	}
	return n
}

// Register creates u's entry and holds its lock until Unregister or Close.
// Registering u twice is a no-op. It fails if another live process holds
// the same entry, or on a file system error.
func (r *Registry) Register(_ context.Context, u spi.URL) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errClosed
	}
	key := u.String()
	if _, ok := r.leases[key]; ok {
		return nil
	}
	l, err := r.create(u)
	if err != nil {
		return err
	}
	r.leases[key] = l
	if !r.keeping {
		r.keeping = true
		r.wg.Add(1)
		go r.keep()
	}
	return nil
}

// create writes u's entry: a locked temporary file renamed into place, so a
// reader never sees an entry that is not locked yet.
func (r *Registry) create(u spi.URL) (*lease, error) {
	dir := r.categoryDir(u.ServiceKey(), category(u))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("file registry: %w", err)
	}
	path := filepath.Join(dir, entryName(u))
	if live, _ := probe(path); live {
		return nil, fmt.Errorf("file registry: %s is already registered by another live registry or process (%s)", u, path)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, ".tmp-"+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("file registry: %w", err)
	}
	fail := func(err error) (*lease, error) {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("file registry: register %s: %w", u, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fail(err)
	}
	if _, err := f.WriteString(u.String() + "\n"); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	return &lease{url: u, path: path, f: f}, nil
}

// intact reports whether l's path still names l's file.
func (l *lease) intact() bool {
	a, err := os.Stat(l.path)
	if err != nil {
		return false
	}
	b, err := l.f.Stat()
	return err == nil && os.SameFile(a, b)
}

func (l *lease) release() {
	if l.intact() {
		_ = os.Remove(l.path)
	}
	_ = l.f.Close() // releases the lock
}

// keep re-creates entries that disappeared (removed by hand or by a reader
// that raced with a re-registration), every poll period until Close.
func (r *Registry) keep() {
	defer r.wg.Done()
	t := time.NewTicker(max(r.p.poll, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-r.quit:
			return
		case <-t.C:
		}
		r.mu.Lock()
		for k, l := range r.leases {
			if l.intact() {
				continue
			}
			nl, err := r.create(l.url)
			if err != nil {
				r.log.Warn("file registry: cannot re-create entry", "url", k, "err", err)
				continue
			}
			_ = l.f.Close()
			r.leases[k] = nl
			r.log.Info("file registry: entry re-created", "url", k)
		}
		r.mu.Unlock()
	}
}

// Unregister removes u's entry and releases its lock; unknown URLs are a
// no-op.
func (r *Registry) Unregister(_ context.Context, u spi.URL) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, ok := r.leases[u.String()]
	if !ok {
		return nil
	}
	delete(r.leases, u.String())
	l.release()
	return nil
}

// probe reports whether the entry at path is held by a live process. A dead
// entry (lock free) is removed if path still names the file probed.
func probe(path string) (live bool, content string) {
	f, err := os.Open(path)
	if err != nil {
		return false, ""
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
		return true, strings.TrimSpace(string(b))
	}
	if err != nil {
		return false, ""
	}
	if a, err := os.Stat(path); err == nil {
		if b, err := f.Stat(); err == nil && os.SameFile(a, b) {
			_ = os.Remove(path)
		}
	}
	return false, ""
}

// scan returns the live entries of dir, removing dead ones.
func (r *Registry) scan(dir string) []spi.URL {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := make([]spi.URL, 0, len(ents))
	for _, e := range ents {
		path := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), ".") {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
				probe(path)
			}
			continue
		}
		live, content := probe(path)
		if !live {
			continue
		}
		u, err := spi.Parse(content)
		if err != nil {
			r.log.Debug("file registry: unreadable entry", "path", path, "err", err)
			continue
		}
		out = append(out, u)
	}
	push.Sort(out)
	return out
}

// Lookup returns the live providers of consumer.ServiceKey(), sorted.
func (r *Registry) Lookup(_ context.Context, consumer spi.URL) ([]spi.URL, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	return r.scan(r.categoryDir(consumer.ServiceKey(), Providers)), nil
}

// Services lists the service keys with at least one live provider, sorted.
func (r *Registry) Services(context.Context) ([]string, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(r.p.dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return []string{}, nil
		}
		return nil, fmt.Errorf("file registry: %w", err)
	}
	keys := []string{}
	for _, e := range ents {
		key, err := url.QueryUnescape(e.Name())
		if err != nil || !e.IsDir() {
			continue
		}
		if len(r.scan(filepath.Join(r.p.dir, e.Name(), Providers))) > 0 {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	return keys, nil
}

func (r *Registry) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errClosed
	}
	return nil
}

// Subscribe watches the providers of consumer.ServiceKey(): the first list
// is pushed at once, then every change within about a second (fsnotify, and
// a lock-state poll for crashed providers).
func (r *Registry) Subscribe(_ context.Context, consumer spi.URL, notify spi.NotifyFunc) (spi.Subscription, error) {
	dir := r.categoryDir(consumer.ServiceKey(), Providers)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("file registry: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	if r.watcher == nil {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			return nil, fmt.Errorf("file registry: watch: %w", err)
		}
		r.watcher = w
		r.watched = map[string]map[*subscription]struct{}{}
		r.wg.Add(1)
		go r.watchLoop(w)
	}
	if r.watched[dir] == nil {
		if err := r.watcher.Add(dir); err != nil {
			return nil, fmt.Errorf("file registry: watch %s: %w", dir, err)
		}
		r.watched[dir] = map[*subscription]struct{}{}
	}
	s := &subscription{
		reg:    r,
		dir:    dir,
		pusher: push.New(notify),
		kick:   make(chan struct{}, 1),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	r.watched[dir][s] = struct{}{}
	r.subs[s] = struct{}{}
	go s.loop()
	return s, nil
}

// watchLoop forwards fsnotify events to the subscriptions of the directory.
func (r *Registry) watchLoop(w *fsnotify.Watcher) {
	defer r.wg.Done()
	for {
		select {
		case <-r.quit:
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			r.mu.Lock()
			for s := range r.watched[filepath.Dir(ev.Name)] {
				s.wake()
			}
			r.mu.Unlock()
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			r.log.Warn("file registry: watch error; polling continues", "err", err)
			r.mu.Lock()
			for s := range r.subs {
				s.wake()
			}
			r.mu.Unlock()
		}
	}
}

// Close withdraws every entry, stops every subscription and waits for the
// registry's goroutines; idempotent.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	subs := r.subs
	r.subs = map[*subscription]struct{}{}
	for _, l := range r.leases {
		l.release()
	}
	r.leases = map[string]*lease{}
	w := r.watcher
	r.mu.Unlock()
	for s := range subs {
		s.stop()
	}
	close(r.quit)
	r.wg.Wait()
	if w != nil {
		_ = w.Close()
	}
	return nil
}

type subscription struct {
	reg    *Registry
	dir    string
	pusher *push.Pusher
	kick   chan struct{}
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once
}

func (s *subscription) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *subscription) loop() {
	defer close(s.done)
	t := time.NewTicker(s.reg.p.poll)
	defer t.Stop()
	for {
		s.pusher.Push(s.reg.scan(s.dir))
		select {
		case <-s.quit:
			return
		case <-s.kick:
		case <-t.C:
		}
	}
}

// Stop ends the subscription and waits until notify is not running;
// idempotent.
func (s *subscription) Stop() {
	r := s.reg
	r.mu.Lock()
	delete(r.subs, s)
	if subs := r.watched[s.dir]; subs != nil {
		delete(subs, s)
		if len(subs) == 0 {
			delete(r.watched, s.dir)
			if !r.closed {
				_ = r.watcher.Remove(s.dir)
			}
		}
	}
	r.mu.Unlock()
	s.stop()
}

func (s *subscription) stop() {
	s.once.Do(func() { close(s.quit) })
	<-s.done
	s.pusher.Stop()
}

var (
	_ spi.RegistryBuilder = Builder{}
	_ spi.RegistryReacher = Builder{}
	_ spi.Registry        = (*Registry)(nil)
	_ spi.Subscription    = (*subscription)(nil)
)
