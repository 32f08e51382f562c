package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/airnode/airnode/extensions/registry/internal/push"
	"github.com/airnode/airnode/spi"
)

// quiet is how long before a listing the directory must have last changed
// for a later poll to trust its unchanged mtime: a file system stamps
// times from a coarse clock (a jiffy), so a change in the same tick as a
// listing, just after it, would leave the mtime as it was listed.
const quiet = 100 * time.Millisecond

// scanned is one live entry of the last listing.
type scanned struct {
	name  string
	ino   uint64
	url   spi.URL
	path  []byte // NUL-terminated, for openRaw
	owner []byte // the owner file's path, NUL-terminated; nil: older format
}

// scanner lists one category directory, reading an entry only when it is
// new: an idle poll (directory unchanged since a listing, every owner
// alive) is a stat of the directory and one open, flock and close per
// owner (per entry of the older format), and allocates nothing but the
// stat's path.
type scanner struct {
	dir    string
	owners string // the registry's OwnersDir

	st     syscall.Stat_t // the directory at the last listing
	listed time.Time      // when it was listed
	have   bool           // st and ents are a listing

	ents       []scanned       // live entries, sorted by name
	list       []spi.URL       // their URLs, sorted and deduplicated
	invalid    []Invalid       // entries of the last listing that are not a provider (consumer) URL of this directory
	unreadable []Invalid       // entries of the last listing that exist but could not be read (EACCES: a token entry of another group)
	memo       map[string]bool // owner id -> alive, within one scan

	// bad, when set, is told each invalid entry of every listing (the
	// registry logs each one once).
	bad func(Invalid)
	// guard, when set, runs before each scan: the per-uid default
	// directory's check (checkPrivate), whose error the scan returns.
	guard func() error
}

// Invalid is an entry of a category directory that readers skip: a
// directory, a file that is not a URL (text, binary, empty, a key given
// twice), a provider URL of another scheme than ProviderScheme or with no
// port, or the URL of another service than the directory's. Name is the entry's file name, Path its path,
// Why the reason.
type Invalid struct {
	Name, Path, Why string
}

func newScanner(dir, registryDir string) *scanner {
	return &scanner{dir: dir, owners: filepath.Join(registryDir, OwnersDir), memo: map[string]bool{}}
}

// identity is the directory's device and inode at the last listing, to
// tell a directory removed and re-created between two scans.
func (s *scanner) identity() (uint64, uint64) { return uint64(s.st.Dev), s.st.Ino }

// scan brings s.list up to date and reports whether it changed. full
// lists the directory even when its stat is unchanged (a file event came).
// An error is the directory's (os.ErrNotExist: removed) or reading an
// entry's (out of descriptors...): s.list is then the last one.
func (s *scanner) scan(full bool) (changed bool, err error) {
	if s.guard != nil {
		if err := s.guard(); err != nil {
			return false, err
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(s.dir, &st); err != nil {
		return false, &os.PathError{Op: "stat", Path: s.dir, Err: err}
	}
	same := s.have && st.Dev == s.st.Dev && st.Ino == s.st.Ino && st.Size == s.st.Size &&
		st.Mtim == s.st.Mtim && st.Ctim == s.st.Ctim &&
		time.Unix(st.Mtim.Unix()).Before(s.listed.Add(-quiet))
	if same && !full {
		clear(s.memo)
		for i := range s.ents {
			live, err := s.alive(&s.ents[i])
			if err != nil {
				return false, err
			}
			if !live {
				full = true // list again: removes it
				break
			}
		}
		if !full {
			return false, nil
		}
	}
	return s.relist(st)
}

// alive reports whether e's owner (or e itself, older format) holds its
// lock; a dead owner file or entry is removed. An error other than
// EMFILE/ENFILE (EACCES on another user's owner file) counts as alive:
// nothing shows the owner dead.
func (s *scanner) alive(e *scanned) (bool, error) {
	var (
		live bool
		err  error
	)
	if e.owner == nil {
		live, _, err = entryState(e.path, false)
	} else {
		id := e.name[strings.LastIndex(e.name, Separator)+len(Separator):]
		if v, ok := s.memo[id]; ok {
			return v, nil
		}
		live, err = ownerState(e.owner, true)
		if err == nil {
			s.memo[id] = live
		}
	}
	switch {
	case err == nil:
		return live, nil
	case outOfFDs(err), errors.Is(err, errHandWritten):
		return false, err
	}
	return true, nil
}

// relist reads the directory, reusing what it knows of entries listed
// before (same name and inode: an entry is renamed into place, never
// written in place).
func (s *scanner) relist(st syscall.Stat_t) (bool, error) {
	listed := time.Now()
	d, err := os.Open(s.dir)
	if err != nil {
		return false, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return false, err
	}
	sort.Strings(names)
	clear(s.memo)
	ents := make([]scanned, 0, len(names))
	var invalid, unreadable []Invalid
	skip := func(n, path, why string) {
		if len(why) > maxWhy { // the text of a binary entry
			why = strings.ToValidUTF8(why[:maxWhy], "") + "..."
		}
		iv := Invalid{Name: n, Path: path, Why: why}
		invalid = append(invalid, iv)
		if s.bad != nil {
			s.bad(iv)
		}
	}
	for _, n := range names {
		path := filepath.Join(s.dir, n)
		if strings.HasPrefix(n, ".") {
			// A temporary file left by a dead process; anything else
			// (a directory, a socket) was not written by a registry and
			// is left alone.
			if info, err := os.Lstat(path); err == nil && info.Mode().IsRegular() && time.Since(info.ModTime()) > staleTemp {
				probe(path)
			}
			continue
		}
		var ino uint64
		if info, err := os.Lstat(path); err == nil {
			if !info.Mode().IsRegular() {
				// Not written by a registry (its entries are regular
				// files): never removed, never read.
				skip(n, path, "a "+fileKind(info.Mode())+", not an entry file: skipped and left alone")
				continue
			}
			ino = info.Sys().(*syscall.Stat_t).Ino
		} else {
			continue // gone since the listing
		}
		e := scanned{name: n, ino: ino}
		if old := s.find(n); old != nil && old.ino == ino {
			e = *old
		} else {
			e.path = cstring(path)
			if _, id := splitName(n); id != "" {
				e.owner = cstring(filepath.Join(s.owners, id))
			}
		}
		live, err := s.alive(&e)
		if errors.Is(err, errHandWritten) {
			skip(n, path, "written by hand, unlocked: no live provider's entry (docs/wire.md: named after its URL, locked by its process); left alone. A direct reference calls an unregistered provider")
			continue
		}
		if err != nil {
			return false, err
		}
		if !live {
			if e.owner != nil {
				removeIfSameIno(path, ino)
			}
			continue
		}
		if e.url.Scheme() == "" {
			content, err := readEntry(e.path)
			if err != nil {
				if outOfFDs(err) {
					return false, err
				}
				if !errors.Is(err, os.ErrNotExist) { // gone since the listing is no news
					// Unreadable (a token entry of another group):
					// readers skip it; registry ls says so (Unreadable).
					unreadable = append(unreadable, Invalid{Name: n, Path: path, Why: fmt.Sprintf("%v (%s)", err, readHint(err))})
				}
				continue
			}
			if content == "" {
				skip(n, string(e.path[:len(e.path)-1]), "empty file, not a URL")
				continue
			}
			u, err := spi.Parse(content)
			if err != nil {
				skip(n, string(e.path[:len(e.path)-1]), "not a URL: "+err.Error())
				continue
			}
			if why := s.misplaced(u); why != "" {
				skip(n, string(e.path[:len(e.path)-1]), why)
				continue
			}
			e.url = u
		}
		ents = append(ents, e)
	}
	s.invalid, s.unreadable = invalid, unreadable
	list := make([]spi.URL, 0, len(ents))
	seen := make(map[string]bool, len(ents))
	for _, e := range ents {
		if k := e.url.String(); !seen[k] {
			seen[k] = true
			list = append(list, e.url)
		}
	}
	push.Sort(list)
	changed := !s.have || !push.Equal(list, s.list)
	s.st, s.listed, s.have, s.ents, s.list = st, listed, true, ents, list
	return changed, nil
}

// ProviderScheme is the scheme of every provider URL consumers take:
// kernel.Protocol, the one protocol airnode speaks whatever the transport
// (the transport is the "transport" key, not the scheme). Extensions do
// not import kernel; a cli test checks that the two agree. A providers
// entry of another scheme (http://, dubbo://) is invalid: no transport
// serves it.
const ProviderScheme = "airnode"

// misplaced says why u, read from an entry of s.dir, is not one of its
// URLs: the URL of another service key than the directory's (an entry
// copied into the wrong service), or, in a providers directory, a URL of
// another scheme than ProviderScheme or with no port to connect to. ""
// when it fits.
func (s *scanner) misplaced(u spi.URL) string {
	svcDir := filepath.Base(filepath.Dir(s.dir))
	if key := u.ServiceKey(); escape(key) != svcDir {
		want, _ := url.QueryUnescape(svcDir)
		return fmt.Sprintf("URL of service %q in the directory of %q", key, want)
	}
	if filepath.Base(s.dir) == Providers && u.Scheme() != ProviderScheme {
		return fmt.Sprintf("scheme %q, which no transport serves (want %s://): provider URL %s", u.Scheme(), ProviderScheme, u.Redacted())
	}
	if filepath.Base(s.dir) == Providers && u.Port() <= 0 {
		return fmt.Sprintf("provider URL %s has no port (want host:port)", u.Redacted())
	}
	return ""
}

// fileKind names a non-regular file's type for a message.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeSymlink != 0:
		return "symbolic link"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// find returns the entry of the last listing named n, or nil.
func (s *scanner) find(n string) *scanned {
	i := sort.Search(len(s.ents), func(i int) bool { return s.ents[i].name >= n })
	if i < len(s.ents) && s.ents[i].name == n {
		return &s.ents[i]
	}
	return nil
}

// readEntry returns the trimmed content of the entry at p (NUL-terminated).
func readEntry(p []byte) (string, error) {
	fd, err := openRaw(p)
	if err != nil {
		return "", err
	}
	defer syscall.Close(fd)
	b, err := io.ReadAll(io.LimitReader(fdReader(fd), 1<<20))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// removeIfSameIno removes path if it is still the inode ino (a dead
// owner's entry, not one re-created in its place since).
func removeIfSameIno(path string, ino uint64) {
	var st syscall.Stat_t
	if syscall.Lstat(path, &st) == nil && st.Ino == ino {
		_ = os.Remove(path)
	}
}

// scanOnce lists dir once (Lookup, Services, registry ls): its live
// entries, none when it is missing.
func (r *Registry) scanOnce(dir string) ([]spi.URL, error) {
	list, _, err := r.scanInvalid(dir)
	return list, err
}

// scanInvalid is scanOnce also returning the invalid entries. The
// entries it could not read are noted for Unreadable.
func (r *Registry) scanInvalid(dir string) ([]spi.URL, []Invalid, error) {
	s := r.newScanner(dir)
	if _, err := s.scan(true); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			r.noteUnreadable(dir, nil)
			return []spi.URL{}, nil, nil
		}
		return nil, nil, err
	}
	r.noteUnreadable(dir, s.unreadable)
	return s.list, s.invalid, nil
}

// noteUnreadable records what the last one-shot read of dir could not
// read (none: forgets it), for Unreadable. One record per directory, so
// a directory read again is not counted twice.
func (r *Registry) noteUnreadable(dir string, bad []Invalid) {
	r.badMu.Lock()
	defer r.badMu.Unlock()
	if len(bad) == 0 {
		delete(r.unread, dir)
		return
	}
	if r.unread == nil {
		r.unread = map[string][]Invalid{}
	}
	r.unread[dir] = bad
}

// Unreadable returns, sorted by path, the entries that the last one-shot
// read of each directory (Services, Lookup, Consumers, Invalid; not the
// subscriptions' scans) found but could not read, and the providers
// directories of services Services skipped because they could not be
// read: Why is the error (EACCES: a token entry of another group, a
// service directory of another user). Readers skip them like a missing
// entry; `airnode registry ls` counts them, so that a user who may read
// nothing of a registry is told so rather than shown no services.
func (r *Registry) Unreadable() []Invalid {
	r.badMu.Lock()
	defer r.badMu.Unlock()
	var all []Invalid
	for _, bad := range r.unread {
		all = append(all, bad...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	return all
}

// newScanner is a scanner of dir that logs its invalid entries through r.
func (r *Registry) newScanner(dir string) *scanner {
	s := newScanner(dir, r.p.dir)
	s.bad = r.badEntry
	if r.p.private {
		s.guard = func() error { return r.guardDir(false) }
	}
	return s
}

// maxWhy bounds the reason of an Invalid, in bytes.
const maxWhy = 200

// maxBadLogged bounds the invalid entries a registry logs (each once):
// past it, one more line says the rest are not logged.
const maxBadLogged = 256

// badEntry logs iv at Warn the first time this registry meets it (same
// path, same reason), naming the file and why readers skip it.
func (r *Registry) badEntry(iv Invalid) {
	r.badMu.Lock()
	defer r.badMu.Unlock()
	if r.badSeen == nil {
		r.badSeen = map[string]struct{}{}
	}
	k := iv.Path + "\x00" + iv.Why
	if _, ok := r.badSeen[k]; ok {
		return
	}
	switch n := len(r.badSeen); {
	case n < maxBadLogged:
		r.badSeen[k] = struct{}{}
		r.log.Warn("invalid entry skipped: remove or fix it", "file", iv.Path, "why", iv.Why)
	case n == maxBadLogged:
		r.badSeen[k] = struct{}{}
		r.log.Warn("more invalid entries skipped; not logged any more", "logged", maxBadLogged)
	}
}

// Invalid returns the entries of consumer.ServiceKey()'s providers
// directory that readers skip (see Invalid), sorted by name: what
// `airnode registry ls` shows as invalid.
func (r *Registry) Invalid(_ context.Context, consumer spi.URL) ([]Invalid, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	_, bad, err := r.scanInvalid(r.categoryDir(consumer.ServiceKey(), Providers))
	if err != nil {
		return nil, fmt.Errorf("file registry: %w (%s)", err, readHint(err))
	}
	return bad, nil
}
