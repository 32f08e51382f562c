package file

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/airnode/airnode/internal/suggest"
	"github.com/airnode/airnode/spi"
)

// URL keys of the file registry.
const (
	// KeyPoll is the lock-state poll period: duration, default DefaultPoll,
	// between MinPoll and MaxPoll.
	KeyPoll = "poll"
)

// Defaults and bounds.
const (
	DefaultPoll = 500 * time.Millisecond
	MinPoll     = 10 * time.Millisecond
	MaxPoll     = time.Minute
)

type params struct {
	dir     string
	poll    time.Duration
	private bool // dir is the per-uid default in $TMPDIR: checked (checkPrivate)
}

func parseParams(u spi.URL) (params, error) {
	var p params
	if u.Scheme() != Name {
		return p, fmt.Errorf("file registry: scheme %q in %q, want %q", u.Scheme(), u.Redacted(), Name)
	}
	if h := u.Host(); h != "" && h != "localhost" {
		return p, fmt.Errorf("file registry: host %q in %q: want file:///absolute/path or file://", h, u.Redacted())
	}
	for _, k := range u.Keys() {
		if k != KeyPoll {
			return p, unknownKey(u, k)
		}
	}
	var err error
	if p.poll, err = u.Duration(KeyPoll, DefaultPoll); err != nil {
		return p, fmt.Errorf("file registry: %w", err)
	}
	if p.poll < MinPoll || p.poll > MaxPoll {
		msg := fmt.Sprintf("file registry: %s=%v out of range %v..%v%s", KeyPoll, p.poll, MinPoll, MaxPoll, spi.BareMillisTail(u, KeyPoll, p.poll, MinPoll))
		return p, &spi.KeyError{Keys: []string{KeyPoll}, Values: []string{u.ParamOr(KeyPoll, "")}, Msg: msg} // a command line's poll=1: a usage error
	}
	if u.Path() != "" {
		p.dir = filepath.Clean("/" + u.Path())
	} else {
		p.dir = DefaultDir()
	}
	p.private = p.dir == tmpDefaultDir()
	return p, nil
}

// unknownKey is Build's error for URL key k, which the file registry does
// not read. A misspelling of one of its keys (Builder.Keys: poll) gets the
// key meant; a key of the ZooKeeper registry, or a misspelling of one
// (file.cahce), gets the key meant and what the file registry does
// instead; any other key is told how the directory is given, since "path"
// or "dir" is the usual guess. Every message ends with the keys it reads.
//
//	file registry: unknown URL key "pol" in "file:///x?pol=1s"; did you
//	mean "poll"? (the one key is poll)
//	file registry: unknown URL key "file.cahce" in "file:///x?file.cahce=y";
//	did you mean "file.cache"? That is a key of the zookeeper registry
//	(...); the file registry needs none: its directory is the state (the
//	one key is poll)
//	file registry: unknown URL key "path" in "file://?path=/srv/reg": the
//	directory is the URL's path, file:///absolute/dir (write
//	file:///srv/reg); file:// alone uses the default, <DefaultDir()>; the
//	one key is poll
//
// The error is a *spi.KeyError naming k and its value.
func unknownKey(u spi.URL, k string) error {
	v, _ := u.Param(k)
	return &spi.KeyError{Keys: []string{k}, Values: []string{v}, Msg: unknownKeyText(u, k).Error()}
}

// unknownKeyText is unknownKey's text, as an error.
func unknownKeyText(u spi.URL, k string) error {
	var own []string
	for _, d := range (Builder{}).Keys() {
		own = append(own, d.Key)
	}
	oneKey := "the one key is " + strings.Join(own, ", ")
	msg := fmt.Sprintf("file registry: unknown URL key %q in %q", k, u.Redacted())
	if m := suggest.Closest(k, own); m != "" {
		return fmt.Errorf("%s; did you mean %q? (%s)", msg, m, oneKey)
	}
	if m := suggest.Closest(k, slices.Sorted(maps.Keys(otherRegistryKeys))); m != "" {
		what := otherRegistryKeys[m]
		if m != k {
			return fmt.Errorf("%s; did you mean %q? That is a key of the zookeeper registry (%s); %s (%s)", msg, m, what[0], what[1], oneKey)
		}
		return fmt.Errorf("%s: %s is a key of the zookeeper registry (%s); %s (%s)", msg, m, what[0], what[1], oneKey)
	}
	msg += ": the directory is the URL's path, file:///absolute/dir"
	if v, _ := u.Param(k); strings.HasPrefix(v, "/") {
		msg += fmt.Sprintf(" (write file://%s)", filepath.Clean(v))
	}
	msg += fmt.Sprintf("; file:// alone uses the default, %s; %s", DefaultDir(), oneKey)
	return errors.New(msg)
}

// otherRegistryKeys are the keys of the bundled zookeeper registry (its
// doc.go) that a file:// URL may be given by someone moving from it: what
// each does there and what the file registry does instead. A literal: an
// extension imports no other extension (the import rules internal/archtest enforces).
var otherRegistryKeys = map[string][2]string{
	"file.cache":      {"its cache of the last provider lists, used while ZooKeeper is down", "the file registry needs none: its directory is the state"},
	"session.timeout": {"how long a kill -9'd provider's entry lasts", "here a crashed provider's entry goes within poll"},
	"connect.timeout": {"how long to wait for a session", "the file registry connects to nothing"},
	"root":            {"the root node of its entries", "here the directory is the URL's path, file:///absolute/dir"},
	spi.KeyBackup:     {"more ensemble servers", "the file registry has no servers: its directory is the URL's path"},
}

// DefaultDir returns the directory used when the URL names none:
// $XDG_RUNTIME_DIR/airnode/registry, else os.UserCacheDir()/airnode/registry,
// else os.TempDir()/airnode-<uid>/registry (made PrivateMode on first
// use, and refused when another user could write it: checkPrivate).
// XDG_RUNTIME_DIR counts only
// when it is an absolute path to an existing directory: the XDG Base
// Directory spec has the login manager create it and tells applications
// to fall back when it is unset or unusable, so a stale or mistyped value
// (XDG_RUNTIME_DIR=/nonexistent/dir, or a directory that went away with
// the session) falls back like an unset one instead of creating
// /nonexistent/dir/airnode/registry. It reads the environment and stats
// that one directory; it creates nothing. The cache directory counts
// only when it or its parent is an existing directory: a service account
// whose HOME does not exist (nobody's /nonexistent) falls back to the
// temporary directory rather than fail "mkdir /nonexistent: permission
// denied" (tester68 F7).
func DefaultDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return filepath.Join(d, "airnode", "registry")
		}
	}
	if d, err := os.UserCacheDir(); err == nil && usableBase(d) {
		return filepath.Join(d, "airnode", "registry")
	}
	return tmpDefaultDir()
}

// usableBase reports whether d, a base directory DefaultDir would put
// the registry under, exists as a directory or could be created in an
// existing one (its parent is a directory).
func usableBase(d string) bool {
	for _, p := range []string{d, filepath.Dir(d)} {
		if fi, err := os.Stat(p); err == nil {
			return fi.IsDir()
		}
	}
	return false
}
