package file

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/airnode/airnode/spi"
)

// OwnersDir is the directory, under the registry directory, of the owner
// lock files: one per Registry that registered something, named by its
// owner id ("<pid>-<12 hex digits>"), holding its pid and exclusively
// flocked by it for its life. An entry of that Registry is named
// "<entry name>@<owner id>" (Separator): it is live while its owner's
// lock is held, so a Registry holds one descriptor whatever the number of
// its entries.
const OwnersDir = ".owners"

// Separator ends an entry's name before its owner id. url.QueryEscape
// escapes '@', and a hashed name ("h-...") has none, so the last '@' of a
// name always starts the owner id; an entry name without one is the
// older format, live while the entry itself is flocked, which this
// version still reads (and removes when its lock is free).
const Separator = "@"

// owner is a Registry's lock file.
type owner struct {
	id   string
	path string
	fid  fileID   // the file's identity when it was created
	f    *os.File // holds the exclusive flock
}

// intact reports whether o's path still names o's file. When it does not,
// the entries naming o are dead to every reader, who removes them: rm -rf
// of the registry removed the file, or the registry directory was moved
// away (mv reg reg.old: the descriptor held still has its lock, in the
// moved copy, and nothing is at the path readers look at), or the file
// was replaced. One stat of the path: the keeper checks it every poll.
// (An fstat of the descriptor, nlink > 0, saw a removal but not a move:
// the provider then re-created its entries without their owner file, and
// every reader removed them, twice a second, until the moved copy was
// deleted.)
func (o *owner) intact() bool {
	id, err := statID(o.path)
	return err == nil && id == o.fid
}

// fileID is a file's identity: device and inode.
type fileID struct{ dev, ino uint64 }

// statID returns path's identity (one stat, without the allocations of
// os.Stat: the keeper checks every entry every poll).
func statID(path string) (fileID, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileID{}, err
	}
	return fileID{uint64(st.Dev), st.Ino}, nil
}

// stamp is what the keeper compares each poll to tell that an entry is
// still the file it wrote: its identity, and its size and modification
// time, which a write in place (echo ... > entry, : > entry) changes
// while the identity stays.
type stamp struct {
	id    fileID
	size  int64
	mtime syscall.Timespec
	mode  uint32 // the file type bits (a directory made in its place)
}

// stampOf returns path's stamp (one stat, no allocation but the path's).
func stampOf(path string) (stamp, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return stamp{}, err
	}
	return stampFrom(&st), nil
}

// stampFrom returns the stamp of the file st describes.
func stampFrom(st *syscall.Stat_t) stamp {
	return stamp{fileID{uint64(st.Dev), st.Ino}, st.Size, st.Mtim, st.Mode & syscall.S_IFMT}
}

// newOwner creates and locks a new owner file in the registry directory
// dir: a locked temporary file renamed into place, so that no reader sees
// it unlocked. Owner files of dead registries (lock free) found there are
// removed.
func newOwner(dir string) (*owner, error) {
	od := filepath.Join(dir, OwnersDir)
	if err := os.MkdirAll(od, DirMode); err != nil {
		return nil, fmt.Errorf("file registry: %w", err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	id := strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(rnd[:])
	tmp := filepath.Join(od, ".tmp-"+id)
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_RDWR, EntryMode)
	if err != nil {
		return nil, fmt.Errorf("file registry: owner lock: %w", err)
	}
	fail := func(err error) (*owner, error) {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("file registry: owner lock %s: %w", tmp, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fail(err)
	}
	if _, err := f.WriteString(strconv.Itoa(os.Getpid()) + "\n"); err != nil {
		return fail(err)
	}
	path := filepath.Join(od, id)
	if err := os.Rename(tmp, path); err != nil {
		return fail(err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("file registry: owner lock %s: %w", path, err)
	}
	fid := fileID{uint64(st.Dev), st.Ino}
	if _, done := swept.LoadOrStore(od, true); !done {
		sweepOwners(od, id)
	}
	return &owner{id: id, path: path, fid: fid, f: f}, nil
}

// swept holds the owners directories this process has swept: once each,
// or the n-th registry of a process would probe n-1 owner files.
var swept sync.Map

// sweepOwners removes the owner files of dead registries in od, but mine.
func sweepOwners(od, mine string) {
	ents, err := os.ReadDir(od)
	if err != nil {
		return
	}
	for _, e := range ents {
		if n := e.Name(); n != mine && !strings.HasPrefix(n, ".") {
			_, _ = ownerState(cstring(filepath.Join(od, n)), true)
		}
	}
}

// splitName returns the entry name's base (the escaped or hashed URL) and
// owner id; owner is "" for an entry of the older format.
func splitName(name string) (base, owner string) {
	if i := strings.LastIndex(name, Separator); i >= 0 {
		return name[:i], name[i+len(Separator):]
	}
	return name, ""
}

// cstring returns s NUL-terminated, for openRaw.
func cstring(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// openRaw opens the NUL-terminated path p read-only without allocating
// (syscall.Open converts its string argument on every call): the idle
// poll opens every owner file, or every older-format entry, each period.
func openRaw(p []byte) (int, error) {
	fd, _, e := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(atFDCWD), uintptr(unsafe.Pointer(&p[0])),
		uintptr(syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

// atFDCWD is AT_FDCWD: openat relative to the working directory (paths
// here are absolute anyway). A variable: a negative constant does not
// convert to uintptr.
var atFDCWD = -100

// ownerState reports whether the owner file at p (NUL-terminated) is
// locked by a live registry. A missing file is dead; a file whose lock is
// free is dead and, when remove is set, removed. Any other error is
// returned (out of descriptors, EACCES...): the caller cannot tell.
func ownerState(p []byte, remove bool) (live bool, err error) {
	fd, err := openRaw(p)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return false, nil
		}
		return false, err
	}
	defer syscall.Close(fd)
	err = syscall.Flock(fd, syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if remove {
		removeIfSame(string(p[:len(p)-1]), fd)
	}
	return false, nil
}

// removeIfSame removes path if it still names the file open as fd.
func removeIfSame(path string, fd int) {
	var a, b syscall.Stat_t
	if syscall.Stat(path, &a) == nil && syscall.Fstat(fd, &b) == nil && a.Dev == b.Dev && a.Ino == b.Ino {
		_ = os.Remove(path)
	}
}

// entryState reports whether the older-format entry at p (NUL-terminated,
// flocked by its live owner) is live, reading its content when it is and
// read is set. A dead entry (lock free) is removed if p still names it,
// when it is a registry's: a temporary file (a name starting with ".") or
// a file named as a registry names the entry of the URL it holds
// (entryName, or legacyName as older versions named it). Any other unlocked file was written by hand (echo URL >
// providers/mine): it is left alone and reported as errHandWritten, with
// its content. Errors other than a missing file are returned.
func entryState(p []byte, read bool) (live bool, content string, err error) {
	fd, err := openRaw(p)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return false, "", nil
		}
		return false, "", err
	}
	defer syscall.Close(fd)
	err = syscall.Flock(fd, syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		if !read {
			return true, "", nil
		}
		b, err := io.ReadAll(io.LimitReader(fdReader(fd), 1<<20))
		return true, strings.TrimSpace(string(b)), err
	}
	if err != nil {
		return false, "", err
	}
	path := string(p[:len(p)-1])
	if name := filepath.Base(path); !strings.HasPrefix(name, ".") {
		b, err := io.ReadAll(io.LimitReader(fdReader(fd), 1<<20))
		if err != nil {
			return false, "", err
		}
		content = strings.TrimSpace(string(b))
		if u, err := spi.Parse(content); err != nil || entryName(u) != name && legacyName(u) != name {
			return false, content, errHandWritten
		}
	}
	removeIfSame(path, fd)
	return false, "", nil
}

// errHandWritten is entryState's report of an unlocked entry file that no
// registry wrote: its name is not the one a registry gives the URL it
// holds (or it holds none). Such a file is never removed: airnode removes
// its own entries only (the owner's, or a dead process's of the older
// format, named after their URL).
var errHandWritten = errors.New("written by hand: no process holds it (flock) and its name is not a registry's for the URL it holds")

// fdReader reads a raw descriptor (not closed by it).
type fdReader int

func (f fdReader) Read(b []byte) (int, error) {
	n, err := syscall.Read(int(f), b)
	if n < 0 {
		n = 0
	}
	if err != nil {
		return n, err
	}
	if n == 0 && len(b) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// probe reports whether the older-format entry at path is held by a live
// process; a dead entry (lock free) is removed as entryState removes one
// (a temporary file, or one named after its URL). Used for temporary
// files and by Register's check.
func probe(path string) (live bool, content string) {
	live, content, _ = entryState(cstring(path), true)
	return live, content
}

// outOfFDs reports whether err is EMFILE or ENFILE.
func outOfFDs(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// readHint is what a Warn adds to a read error: where the limit is.
func readHint(err error) string {
	switch {
	case errors.Is(err, syscall.EMFILE):
		return "out of file descriptors: see ulimit -n"
	case errors.Is(err, syscall.ENFILE):
		return "the system is out of file descriptors: see fs.file-max"
	case errors.Is(err, errNotPrivate):
		return "the default directory is not this user's alone: see err"
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return "permission denied: see the directory's owner and mode"
	}
	return "a file system error"
}
