package file

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// Permissions of what the registry creates, before the process's umask
// takes its bits away (umask 022 gives 0755 and 0644, umask 002 0775 and
// 0664): a registry directory shared by several users of one group needs
// umask 002 and, for the group to follow, a setgid directory (chmod 2775),
// whose new directories inherit its group and setgid bit. An entry whose
// URL has a token is TokenEntryMode: readable by its owner and group
// only, and named by a hash of its URL so that no directory listing shows
// the token; a consumer that cannot read it does not list that provider.
const (
	DirMode        = 0o777 // registry, service and category directories
	EntryMode      = 0o666 // an entry, its temporary file, an owner lock file
	TokenEntryMode = 0o640 // an entry whose URL has a token
)

// hasSecret reports whether u carries a secret that logs must not show
// (spi.URL.Redacted): a token, a method's token, a password.
func hasSecret(u spi.URL) bool {
	return u.Redacted() != u.String()
}

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
	log, own := b.Logger, b.Logger != nil
	if log == nil {
		log = slog.Default()
	}
	desc := u.Redacted()
	if u.Path() == "" {
		desc += " (" + p.dir + ")" // the default directory depends on the environment
	}
	return &Registry{
		p:      p,
		desc:   desc,
		log:    log.With("component", "file registry", "registry", "file://"+p.dir),
		ownLog: own,
		leases: map[string]*lease{},
		subs:   map[*subscription]struct{}{},
		quit:   make(chan struct{}),
	}, nil
}

var errClosed = errors.New("file registry: closed")

var _ spi.RegistryHealth = (*Registry)(nil)

// Registry is one process's handle on a registry directory.
type Registry struct {
	p      params
	desc   string
	log    *slog.Logger
	ownLog bool // log came from Builder.Logger: UseLogger leaves it

	mu       sync.Mutex
	leases   map[string]*lease // canonical URL -> held entry
	subs     map[*subscription]struct{}
	own      *owner                                // the lock file naming this registry's entries; nil before a Register
	ownFail  failing                               // the owner lock file cannot be re-created
	watching bool                                  // holds a reference on the process's watcher (hub)
	watched  map[string]map[*subscription]struct{} // directory -> subscriptions
	polling  bool                                  // inotify was unavailable: subscriptions only poll
	closed   bool
	keeping  bool

	badMu   sync.Mutex
	badSeen map[string]struct{}  // invalid entries logged (path NUL reason), at most maxBadLogged+1
	unread  map[string][]Invalid // directory -> what its last one-shot read could not read (Unreadable)

	worldOnce sync.Once // warnWorldWritable, at the first entry created

	quit chan struct{}  // closed by Close: stops the keeper
	wg   sync.WaitGroup // keeper

	// unpublished is Health's error: the provider entries the keeper
	// cannot put back (noteHealthLocked); nil while every one is in place.
	unpublished atomic.Pointer[error]
}

// warnWorldWritable logs, at Warn, the first of dirs (the registry's
// directory, then the category directory an entry was just created in)
// that every local user may write to without the sticky bit: there any
// of them can register a provider the consumers will call, or delete
// this one's entry (tester68 F6: under umask 000 every directory was
// 0777, and another user's process answered the calls). Group sharing
// (umask 002, 0775) is by design and not logged; neither is a directory
// that cannot be read (the registry's own errors say why).
func (r *Registry) warnWorldWritable(dirs ...string) {
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil {
			continue
		}
		if m := st.Mode(); m.Perm()&0o002 != 0 && m&os.ModeSticky == 0 {
			r.log.Warn("the registry directory is writable by every user of this machine: any of them can register a provider that consumers will call, or delete this node's entries; chmod o-w it (or +t), and run with umask 022 (002 to share it with a group)",
				"dir", d, "mode", m.String())
			return
		}
	}
}

// lease is a registered entry: its path and the stamp of the file
// written there.
type lease struct {
	url  spi.URL
	path string
	st   stamp
	fail failing // re-creating it failed
}

// UseLogger makes the registry log to l, its node's logger
// (spi.LoggerUser), unless Builder.Logger gave it one. Call it before any
// other method, as the kernel does right after Build.
func (r *Registry) UseLogger(l *slog.Logger) {
	if !r.ownLog && l != nil {
		r.log = l.With("component", "file registry", "registry", "file://"+r.p.dir)
	}
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

// entryName is the file name of u's entry: u encoded once, or "h-" and a
// SHA-256 prefix of u.Redacted() (its secrets replaced by "***") when
// that is over maxName bytes or u has a secret (a token). The name thus
// tells nothing of the token: a hash of the whole URL let a local user
// who can list the directory test guessed tokens offline, every other
// part of a provider URL being guessable (its address, methods, the
// timestamp from the owner lock file's mtime). Two URLs that differ only
// in their token get one name, as the same provider (address and service)
// should. Readers take an entry of any name (they read its URL), so
// renaming changed nothing for them; see legacyName for the older one.
func entryName(u spi.URL) string {
	n := escape(u.String())
	if len(n) > maxName || hasSecret(u) {
		n = hashName(u.Redacted())
	}
	return n
}

// hashName is "h-" and the first 20 bytes of the SHA-256 of s, in hex.
func hashName(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "h-" + hex.EncodeToString(sum[:20])
}

// legacyName is the name versions before 2 Dec 2026 (and docs/wire.md's
// recipe for providers in other languages until then) gave the entry of a
// URL with a token, a hash of the whole URL; "" for a URL without
// secrets, whose name did not change. A dead older-format entry so named
// is still recognised as a registry's (entryState) and removed.
func legacyName(u spi.URL) string {
	if !hasSecret(u) {
		return ""
	}
	return hashName(u.String())
}

// Register creates u's entry, named after the registry's owner lock file
// (created by the first Register, locked until Close: one descriptor for
// all entries), until Unregister or Close. Registering u twice is a
// no-op. It fails if another live registry holds a provider entry of u,
// or on a file system error.
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
	if err := r.ensureOwner(); err != nil {
		return err
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

// ensureOwner creates the registry's owner lock file, or a new one when
// its path no longer names it (rm -rf of the registry, or the directory
// moved away: the entries naming it are dead to readers, who remove
// them), re-creating every entry under the new one, before readers can
// see an entry naming it. r.mu is held.
func (r *Registry) ensureOwner() error {
	if r.own != nil && r.own.intact() {
		return nil
	}
	if err := r.guardDir(true); err != nil {
		return err
	}
	o, err := newOwner(r.p.dir)
	if err != nil {
		return err
	}
	old := r.own
	r.own = o
	if old == nil {
		return nil
	}
	for k, l := range r.leases {
		nl, err := r.create(l.url)
		if err != nil {
			r.cannotRecreate(l, err)
			continue
		}
		if l.intact() {
			_ = os.Remove(l.path)
		}
		r.leases[k] = nl
	}
	_ = old.f.Close()
	r.log.Warn("owner lock file re-created, and the entries naming it: it was not at its path any more (the registry directory was removed or moved away, or the file replaced)",
		"path", o.path, "entries", len(r.leases))
	return nil
}

// cannotRecreate logs, bounded (failing), that l's entry cannot be
// written: a directory where it belongs (mkdir by hand), a file where a
// directory of the registry belongs, a read-only file system.
func (r *Registry) cannotRecreate(l *lease, err error) {
	hint := "retrying every poll"
	if st, serr := stampOf(l.path); serr == nil && st.mode == syscall.S_IFDIR {
		hint = "a directory is where the entry belongs: remove it (rmdir); retrying every poll"
	}
	l.fail.why = fmt.Sprintf("%v (%s)", shortCause(err), hint)
	l.fail.warn(r.log, "cannot re-create entry; consumers that do not list it yet will not find this provider",
		"url", l.url.Redacted(), "path", l.path, "err", err, "hint", hint)
}

// create writes u's entry, named after r's owner (r.mu held, r.own set):
// a temporary file renamed into place. A provider URL already registered
// by another live registry (either entry format) is an error; a consumer
// URL is not (two nodes of one process may refer to one service in the
// same millisecond), each registry has its own entry.
func (r *Registry) create(u spi.URL) (*lease, error) {
	cat := category(u)
	dir := r.categoryDir(u.ServiceKey(), cat)
	if err := r.guardDir(true); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return nil, fmt.Errorf("file registry: %w", err)
	}
	r.worldOnce.Do(func() { r.warnWorldWritable(r.p.dir, dir) })
	base := entryName(u)
	path := filepath.Join(dir, base+Separator+r.own.id)
	for i := 2; r.takenByOther(path, u); i++ {
		// another URL of this registry with the same name: one that
		// differs only in its token (entryName)
		path = filepath.Join(dir, base+"-"+strconv.Itoa(i)+Separator+r.own.id)
	}
	if cat == Providers {
		if other := r.liveOther(dir, base); other != "" {
			return nil, fmt.Errorf("file registry: %s is already registered by another live registry or process (%s)", u.Redacted(), other)
		}
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, ".tmp-"+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(rnd[:]))
	mode := os.FileMode(EntryMode)
	if hasSecret(u) {
		mode = TokenEntryMode
	}
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		return nil, fmt.Errorf("file registry: %w", err)
	}
	_, err = f.WriteString(u.String() + "\n")
	var st syscall.Stat_t
	if err == nil {
		err = syscall.Fstat(int(f.Fd()), &st) // what the keeper compares (rename keeps it)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("file registry: register %s: %w", u.Redacted(), err)
	}
	return &lease{url: u, path: path, st: stampFrom(&st)}, nil
}

// takenByOther reports whether path is the entry of another URL than u
// registered by r. r.mu is held.
func (r *Registry) takenByOther(path string, u spi.URL) bool {
	for k, l := range r.leases {
		if l.path == path && k != u.String() {
			return true
		}
	}
	return false
}

// liveOther returns the path of a live entry of base in dir that is not
// r's (the older format's, or another owner's), or "". Dead ones it finds
// are removed.
func (r *Registry) liveOther(dir, base string) string {
	old := filepath.Join(dir, base)
	if live, _ := probe(old); live {
		return old
	}
	names, err := readNames(dir)
	if err != nil {
		return ""
	}
	owners := filepath.Join(r.p.dir, OwnersDir)
	for _, n := range names {
		b, id := splitName(n)
		if b != base || id == "" || id == r.own.id {
			continue
		}
		path := filepath.Join(dir, n)
		live, err := ownerState(cstring(filepath.Join(owners, id)), true)
		if live || err != nil && !errors.Is(err, syscall.ENOENT) {
			return path
		}
		_ = os.Remove(path)
	}
	return ""
}

// readNames returns the names in dir.
func readNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

// intact reports whether l's path still names l's file (written in place
// or not: an entry edited by hand is still the provider's to remove).
func (l *lease) intact() bool {
	id, err := statID(l.path)
	return err == nil && id == l.st.id
}

func (l *lease) release() {
	if l.intact() {
		_ = os.Remove(l.path)
	}
}

// keep puts back, every poll period until Close, the owner lock file
// when its path no longer names it (ensureOwner: one warning for the
// whole directory removed) and the entries that were removed (by hand,
// or by a reader that raced with a re-registration), replaced (renamed
// over: sed -i, editors) or edited in place (echo ... > entry, : >
// entry: the URL a provider registered is its own, not a runtime
// override; a touch that leaves the content is no edit), each with a
// warning naming the file and, replaced or edited, what it held
// (redacted).
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
		r.keepOnce()
		r.mu.Unlock()
	}
}

// keepOnce is one poll of keep. r.mu is held.
func (r *Registry) keepOnce() {
	if len(r.leases) == 0 {
		return
	}
	if err := r.ensureOwner(); err != nil {
		// Entries written now would name no owner file: readers would
		// remove them at once.
		r.ownFail.why = fmt.Sprintf("%v (retrying every poll)", shortCause(err))
		r.ownFail.warn(r.log, "cannot re-create the owner lock file, nor therefore the entries (consumers that do not list them already will not find them); retrying every poll",
			"dir", r.p.dir, "entries", len(r.leases), "err", err)
		r.noteHealthLocked()
		return
	}
	defer r.noteHealthLocked()
	r.ownFail.recovered(r.log, "the owner lock file could be re-created again", "path", r.own.path)
	for k, l := range r.leases {
		st, err := stampOf(l.path)
		if err == nil && st == l.st {
			continue
		}
		if err != nil && !r.own.intact() {
			// The registry directory went after ensureOwner looked (rm
			// -rf, a tmp cleaner): the next poll puts it all back with
			// its one warning, not one per entry.
			return
		}
		how, was := "removed", ""
		switch {
		case err != nil:
		case st.mode != syscall.S_IFREG:
			how, was = "replaced", "(not a regular file)"
		default:
			content, rerr := readEntry(cstring(l.path))
			switch {
			case rerr == nil && content == l.url.String() && st.id == l.st.id:
				l.st = st // touched, or rewritten as it was
				continue
			case rerr == nil && content == l.url.String():
				how = "rewritten" // replaced by its own URL (sed -i that changed nothing): put back with the entry's mode
			case st.id == l.st.id:
				how, was = "edited", handText(content)
			default:
				how, was = "replaced", handText(content)
			}
		}
		nl, err := r.create(l.url)
		if err != nil {
			r.cannotRecreate(l, err)
			continue
		}
		r.leases[k] = nl
		const restart = "a provider's entry holds the URL it registered: change its configuration and restart it instead"
		switch {
		case l.fail.n > 0:
			l.fail.recovered(r.log, "entry re-created", "url", l.url.Redacted(), "path", nl.path)
		case how == "edited":
			r.log.Warn("entry edited in place; put back ("+restart+")",
				"path", nl.path, "was", was, "url", l.url.Redacted())
		case how == "replaced":
			r.log.Warn("entry replaced by another file (renamed over it: sed -i, an editor's save); put back ("+restart+")",
				"path", nl.path, "was", was, "url", l.url.Redacted())
		case how == "removed":
			r.log.Warn("entry removed by someone else; re-created",
				"path", nl.path, "url", l.url.Redacted())
		default:
			r.log.Info("entry replaced by a file holding its own URL; re-written", "path", nl.path, "url", l.url.Redacted())
		}
	}
}

// handText is what a Warn shows of an entry edited by hand: its URL
// without secrets, or its text, bounded ("(empty)" for none).
func handText(content string) string {
	if content == "" {
		return "(empty)"
	}
	if u, err := spi.Parse(content); err == nil {
		return u.Redacted()
	}
	if len(content) > maxWhy {
		content = content[:maxWhy] + "..."
	}
	return strings.ToValidUTF8(content, "?")
}

// failing bounds the Warn of something the keeper retries every poll (an
// entry or owner lock file it cannot re-create): the first failure, then
// one line every staleWarnEvery (30 s) with the count and how long, and an
// Info when it works again. Logged every poll, it was two lines a second
// per entry for as long as a file sat where the registry directory
// belongs.
type failing struct {
	n             int
	since, warnAt time.Time
	why           string // the last failure, short (Health)
}

// shortCause is err without the paths and URL it repeats: a rename's or
// an open's own error ("file exists", "read-only file system"), with the
// operation and path of another file's failure.
func shortCause(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %s: %w", pe.Op, pe.Path, pe.Err)
	}
	return err
}

// warn counts a failure and logs it when due.
func (f *failing) warn(log *slog.Logger, msg string, args ...any) {
	now := time.Now()
	f.n++
	switch {
	case f.n == 1:
		f.since, f.warnAt = now, now
		log.Warn(msg, args...)
	case now.Sub(f.warnAt) >= staleWarnEvery:
		f.warnAt = now
		log.Warn(msg, append(args, "failed_polls", f.n, "failing_for", now.Sub(f.since).Round(time.Second))...)
	}
}

// recovered logs, after failures, that it works again, and resets f.
func (f *failing) recovered(log *slog.Logger, msg string, args ...any) {
	if f.n == 0 {
		return
	}
	log.Info(msg, append(args, "after_failed_polls", f.n, "failed_for", time.Since(f.since).Round(time.Millisecond))...)
	*f = failing{}
}

// Health implements spi.RegistryHealth: an error naming the services
// whose provider entries the registry cannot put back (the keeper's
// "cannot re-create entry" Warn: a directory made where the entry
// belongs, a file where a directory of the registry belongs, a read-only
// file system, an owner lock file it cannot re-create), with the path
// and why; nil once they are back (the keeper's Info "entry re-created"),
// and for a registry with no provider entry (a consumer's). Consumers
// that do not list such a provider yet will not find it, though it runs:
// `airnode serve` reports the text as a warning (/stats,
// airnode_health_warning{check="registry"}). It reads what the keeper
// found at its last poll: no I/O, never blocks, safe for concurrent use.
func (r *Registry) Health() error {
	if e := r.unpublished.Load(); e != nil {
		return *e
	}
	return nil
}

// noteHealthLocked sets what Health returns from the provider leases the
// keeper failed to put back at its last poll (each lease's fail, or the
// owner lock file's: then none is in place). r.mu is held.
func (r *Registry) noteHealthLocked() {
	var keys []string
	var first *lease
	for _, l := range r.leases {
		if category(l.url) != Providers || r.ownFail.n == 0 && l.fail.n == 0 {
			continue
		}
		if k := l.url.ServiceKey(); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
		if first == nil || l.path < first.path {
			first = l
		}
	}
	if len(keys) == 0 {
		r.unpublished.Store(nil)
		return
	}
	slices.Sort(keys)
	var err error
	if r.ownFail.n > 0 {
		err = fmt.Errorf("file registry %s: provider entries of %s are not in the registry: cannot re-create the owner lock file: %s",
			r.desc, strings.Join(keys, ", "), r.ownFail.why)
	} else {
		err = fmt.Errorf("file registry %s: provider entries of %s are not in the registry (consumers that do not list this provider yet will not find it): cannot re-create %s: %s",
			r.desc, strings.Join(keys, ", "), first.path, first.fail.why)
	}
	r.unpublished.Store(&err)
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
	r.noteHealthLocked()
	return nil
}

// Lookup returns the live providers of consumer.ServiceKey(), sorted.
func (r *Registry) Lookup(_ context.Context, consumer spi.URL) ([]spi.URL, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	list, err := r.scanOnce(r.categoryDir(consumer.ServiceKey(), Providers))
	if err != nil {
		return nil, readError(err)
	}
	return list, nil
}

// Consumers returns the live consumer entries of consumer.ServiceKey()
// (the URLs references registered with side=consumer, under the
// service's consumers directory), sorted; none when there are none.
// Registries do not need it: `airnode registry ls` counts consumers with
// it.
func (r *Registry) Consumers(_ context.Context, consumer spi.URL) ([]spi.URL, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	list, err := r.scanOnce(r.categoryDir(consumer.ServiceKey(), Consumers))
	if err != nil {
		return nil, readError(err)
	}
	return list, nil
}

// Services lists the service keys with at least one live provider, sorted.
func (r *Registry) Services(ctx context.Context) ([]string, error) {
	keys, _, err := r.ServicesWithInvalid(ctx)
	return keys, err
}

// ServicesWithInvalid returns what Services does (keys) and, apart, the
// service keys with no live provider whose providers directory holds
// invalid entries (invalidOnly; see Invalid), each sorted, in one walk of
// the registry directory. `airnode registry ls` lists both; a reference
// (Services) has no use for the second. Errors are Services'.
func (r *Registry) ServicesWithInvalid(context.Context) (keys, invalidOnly []string, err error) {
	if err := r.check(); err != nil {
		return nil, nil, err
	}
	if err := r.guardDir(false); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	ents, err := os.ReadDir(r.p.dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return []string{}, []string{}, nil
		}
		return nil, nil, fmt.Errorf("file registry: %w", err)
	}
	keys, invalidOnly = []string{}, []string{}
	for _, e := range ents {
		key, err := url.QueryUnescape(e.Name())
		if err != nil || !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		list, bad, err := r.scanInvalid(filepath.Join(r.p.dir, e.Name(), Providers))
		if err != nil {
			if outOfFDs(err) {
				return nil, nil, fmt.Errorf("file registry: %w (%s)", err, readHint(err))
			}
			// One service's directory that cannot be read (a file
			// where its providers directory should be, EACCES) does
			// not hide the others: it is logged and skipped.
			dir := filepath.Join(r.p.dir, e.Name(), Providers)
			iv := Invalid{Name: e.Name(), Path: dir, Why: fmt.Sprintf("service %q skipped: %v (%s)", key, err, readHint(err))}
			r.badEntry(iv)
			r.noteUnreadable(dir, []Invalid{iv})
			continue
		}
		switch {
		case len(list) > 0:
			keys = append(keys, key)
		case len(bad) > 0:
			invalidOnly = append(invalidOnly, key)
		}
	}
	sort.Strings(keys)
	sort.Strings(invalidOnly)
	return keys, invalidOnly, nil
}

// readError is Lookup's and Consumers' error for err, a failed scan:
// with where the limit is (readHint), or as it is when it already says
// everything (the per-uid default directory refused: checkPrivate).
func readError(err error) error {
	if errors.Is(err, errNotPrivate) {
		return err
	}
	return fmt.Errorf("file registry: %w (%s)", err, readHint(err))
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
// a lock-state poll for crashed providers), through the one inotify
// instance of the process, shared by its registries (watchHub). Without
// inotify (its limits reached) it polls only, after one Warn per process:
// it never fails for that.
func (r *Registry) Subscribe(_ context.Context, consumer spi.URL, notify spi.NotifyFunc) (spi.Subscription, error) {
	dir := r.categoryDir(consumer.ServiceKey(), Providers)
	if err := r.guardDir(true); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, DirMode); err != nil {
		return nil, fmt.Errorf("file registry: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	if r.watched == nil {
		r.watched = map[string]map[*subscription]struct{}{}
	}
	if !r.watching && !r.polling {
		if err := hub.acquire(); err != nil {
			r.pollInstead(err, "instances", "fs.inotify.max_user_instances (inotify instances per user, all processes; sysctl fs.inotify.max_user_instances; 128 on Debian), or ulimit -n")
		} else {
			r.watching = true
		}
	}
	if r.watched[dir] == nil {
		if r.watching {
			if err := hub.add(r, dir); err != nil {
				r.pollInstead(err, "watches", "fs.inotify.max_user_watches (inotify watches per user; sysctl fs.inotify.max_user_watches)")
			}
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

// newWatcher is fsnotify.NewWatcher; tests replace it (export_test.go).
var newWatcher = fsnotify.NewWatcher

// pollInstead logs, once per process for each kind of limit ("instances",
// "watches"; once per registry was 372 lines from one process of 500
// nodes), that inotify failed (err; limit names the kernel
// limit behind it) and that the subscriptions poll instead: they always
// poll every poll period, so a change is seen within it instead of at
// once. Later registries log it at Debug. Subscribe does not fail for it
// (when it did, the 129th consumer process of a user could not
// start). r.mu is held.
func (r *Registry) pollInstead(err error, kind, limit string) {
	if r.polling {
		return
	}
	r.polling = true
	lvl := slog.LevelDebug
	if firstWarn(kind) {
		lvl = slog.LevelWarn
	}
	r.log.Log(context.Background(), lvl, "inotify unavailable; polling the providers directories instead (a change is seen within poll, not at once; logged once per process)",
		"err", err, "limit", limit, "poll", r.p.poll)
}

// Polling reports whether inotify was unavailable (Subscribe logged one
// Warn), so that subscriptions see changes by polling only.
func (r *Registry) Polling() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.polling
}

// wakeDir wakes r's subscriptions of dir (a file event in it).
func (r *Registry) wakeDir(dir string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.watched[dir] {
		s.wake()
	}
}

// wakeAll wakes every subscription of r (a watch error: events may be
// lost).
func (r *Registry) wakeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.subs {
		s.wake()
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
	r.unpublished.Store(nil)
	if o := r.own; o != nil {
		if o.intact() {
			_ = os.Remove(o.path)
		}
		_ = o.f.Close() // releases the lock
		r.own = nil
	}
	watching := r.watching
	r.watching = false
	r.mu.Unlock()
	for s := range subs {
		s.stop()
	}
	close(r.quit)
	r.wg.Wait()
	if watching {
		hub.release(r) // the last registry closes the process's watcher
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

// Settle is how long a subscription waits before it pushes a list that
// lost providers, looking again then: rm -rf of the registry removes the
// entries a moment before their directory, and a directory that is gone
// keeps the last list (see loop).
const Settle = 100 * time.Millisecond

// backGrace is how long, after a removed providers directory came back, a
// subscription keeps the providers of its last list that have not
// re-created their entries yet (each provider does within its own poll
// period, not this subscription's): 3 poll periods, at least 3 of
// DefaultPoll (1.5 s), at most 10 s. The floor was 1 s, which a consumer
// polling every 50 ms gave providers polling at the default 500 ms: two
// of their polls, and under -race a provider process re-created its entry
// after it (a list of one provider of two pushed, CI).
func (p params) backGrace() time.Duration {
	return min(max(3*p.poll, 3*DefaultPoll), 10*time.Second)
}

// loop pushes the providers directory's list at once, then after every
// file event and every poll period, until Stop.
//
// A removed directory (rm -rf of the registry, a tmp cleaner) is the
// registry being unavailable, not every provider leaving (as the
// zookeeper registry treats a lost session): nothing is pushed while it is
// missing, so consumers keep their last list and their connections; one
// Warn line says so. When it is back (the providers' registries re-create
// their entries within their poll period) it is watched again, and for
// backGrace the list pushed is the directory's merged with the last one,
// so that the providers not re-created yet are not dropped; then the
// directory's own list. A list that lost providers is pushed only after
// Settle, if the directory is still there: an empty directory (every
// provider unregistered) is an empty list.
func (s *subscription) loop() {
	defer close(s.done)
	r := s.reg
	t := time.NewTicker(r.p.poll)
	defer t.Stop()
	sc := r.newScanner(s.dir)
	var (
		last    []spi.URL // the list last pushed; nil before the first
		pushed  bool      // a first list was pushed
		seen    [2]uint64 // the directory last read (device, inode)
		seenOK  bool
		gone    bool        // the directory is missing: nothing is pushed
		goneAt  time.Time   // when gone was seen (or the re-created directory), for the back line
		merge   bool        // after the directory came back: lists are merged with last
		graceT  *time.Timer // ends merge
		graceC  <-chan time.Time
		readErr error     // the directory cannot be read (not removed): last list kept
		since   time.Time // of readErr
		warnAt  time.Time // of the last Warn about readErr
		fails   int       // scans failed since
		full    = true    // list the directory even if its stat is unchanged
		again   bool      // push the list even if unchanged (grace ended)
	)
	defer func() {
		if graceT != nil {
			graceT.Stop()
		}
	}()
	for {
		changed, err := sc.scan(full)
		if err == nil && changed && pushed && !merge && lost(last, sc.list) {
			select {
			case <-s.quit:
				return
			case <-time.After(Settle):
			}
			_, err = sc.scan(true)
		}
		full = err != nil
		list := sc.list
		// removed and re-created (by a provider's registry) since the
		// last look, without a look in between
		var id [2]uint64
		id[0], id[1] = sc.identity()
		recreated := err == nil && seenOK && id != seen
		if err == nil {
			seen, seenOK = id, true
		}
		switch {
		case err != nil && !errors.Is(err, os.ErrNotExist):
			// EMFILE, EACCES, EIO...: the directory is there, this
			// process cannot read it now; the providers did not leave
			fails++
			switch now := time.Now(); {
			case readErr == nil:
				since, warnAt = now, now
				r.log.Warn("cannot read the providers directory; keeping the last provider list and retrying every poll",
					"dir", s.dir, "providers", len(last), "err", err, "hint", readHint(err), "poll", r.p.poll)
			case now.Sub(warnAt) >= staleWarnEvery:
				warnAt = now
				r.log.Warn("still cannot read the providers directory; the provider list is stale (providers added or removed since are not seen)",
					"dir", s.dir, "providers", len(last), "stale_for", now.Sub(since).Round(time.Second), "failed_polls", fails,
					"err", err, "hint", readHint(err))
			}
			readErr = err
			if !pushed {
				s.pusher.Push(nil) // no list to keep: the first list is empty
				pushed = true
			}
		case err != nil && !pushed:
			s.pusher.Push(nil) // no list to keep: the first list is empty
			pushed = true
		case err != nil:
			if !gone {
				gone, goneAt = true, time.Now()
				r.log.Warn("providers directory removed; keeping the last provider list until it is back (the providers re-create their entries)",
					"dir", s.dir, "providers", len(last), "err", err)
			}
		default:
			if again {
				changed, again = true, false
			}
			if readErr != nil {
				r.log.Info("reading the providers directory again", "dir", s.dir,
					"providers", len(list), "failed_polls", fails, "for", time.Since(since).Round(time.Millisecond), "err_was", readErr)
				readErr, fails = nil, 0
				changed = true
			}
			if recreated && !gone && !merge {
				goneAt = time.Now() // removed and re-created between two looks: gone for under one
				r.log.Warn("providers directory removed; keeping the last provider list until it is back (the providers re-create their entries)",
					"dir", s.dir, "providers", len(last), "err", "re-created since the last look")
			}
			if gone || recreated && !merge {
				if graceT != nil {
					graceT.Stop()
				}
				gone, merge = false, true
				r.rewatch(s.dir)
				grace := r.p.backGrace()
				r.log.Info("providers directory back; watching it again", "dir", s.dir,
					"providers", len(list), "gone_for", time.Since(goneAt).Round(time.Millisecond), "keeping_others_for", grace)
				graceT = time.NewTimer(grace)
				graceC = graceT.C
				changed = true
			}
			switch {
			case merge:
				s.pusher.Push(union(list, last))
			case changed || !pushed:
				last = slices.Clone(list)
				s.pusher.Push(slices.Clone(list))
			}
			pushed = true
		}
		select {
		case <-s.quit:
			return
		case <-s.kick:
			full = true
		case <-t.C:
		case <-graceC:
			merge, graceT, graceC = false, nil, nil
			full, again = true, true // push the directory's own list
		}
	}
}

// staleWarnEvery is how often a subscription that cannot read its
// providers directory repeats its Warn, with how long its list has been
// stale (without it, a consumer at its descriptor limit
// said so once, then nothing while its list went stale); tests shorten it.
var staleWarnEvery = 30 * time.Second

// lost reports whether a provider of last is not in list.
func lost(last, list []spi.URL) bool {
	have := make(map[string]bool, len(list))
	for _, u := range list {
		have[u.String()] = true
	}
	for _, u := range last {
		if !have[u.String()] {
			return true
		}
	}
	return false
}

// union returns list with the URLs of keep that it lacks.
func union(list, keep []spi.URL) []spi.URL {
	out := slices.Clone(list)
	have := make(map[string]bool, len(list))
	for _, u := range list {
		have[u.String()] = true
	}
	for _, u := range keep {
		if !have[u.String()] {
			out = append(out, u)
		}
	}
	return out
}

// rewatch watches dir again after it was removed and re-created (the
// watch on a removed directory is gone). A failure is logged: polling
// goes on.
func (r *Registry) rewatch(dir string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || !r.watching || r.watched[dir] == nil {
		return
	}
	if err := hub.rewatch(dir); err != nil {
		r.log.Warn("cannot watch the providers directory again; polling continues", "dir", dir, "err", err)
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
			if !r.closed && r.watching {
				hub.remove(r, s.dir)
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
	_ spi.LoggerUser      = (*Registry)(nil)
)
