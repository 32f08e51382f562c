package file

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
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
	dir  string
	poll time.Duration
}

func parseParams(u spi.URL) (params, error) {
	var p params
	if u.Scheme() != Name {
		return p, fmt.Errorf("file registry: scheme %q in %q, want %q", u.Scheme(), u, Name)
	}
	if h := u.Host(); h != "" && h != "localhost" {
		return p, fmt.Errorf("file registry: host %q in %q: want file:///absolute/path or file://", h, u)
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
		return p, fmt.Errorf("file registry: %s=%v out of range %v..%v", KeyPoll, p.poll, MinPoll, MaxPoll)
	}
	if u.Path() != "" {
		p.dir = filepath.Clean("/" + u.Path())
	} else {
		p.dir = DefaultDir()
	}
	return p, nil
}

// unknownKey is Build's error for URL key k, which the file registry does
// not read: it says how the directory is given, since "path" or "dir" is
// the usual guess, and the key meant when k is a misspelling of poll.
//
//	file registry: unknown URL key "path" in "file://?path=/srv/reg": the
//	directory is the URL's path, file:///absolute/dir (write
//	file:///srv/reg); file:// alone uses the default, <DefaultDir()>; the
//	one key is poll
func unknownKey(u spi.URL, k string) error {
	msg := fmt.Sprintf("file registry: unknown URL key %q in %q: the directory is the URL's path, file:///absolute/dir", k, u)
	if v, _ := u.Param(k); strings.HasPrefix(v, "/") {
		msg += fmt.Sprintf(" (write file://%s)", filepath.Clean(v))
	}
	msg += fmt.Sprintf("; file:// alone uses the default, %s; the one key is %s", DefaultDir(), KeyPoll)
	if m := suggest.Closest(k, []string{KeyPoll}); m != "" {
		msg += fmt.Sprintf("; did you mean %q?", m)
	}
	return errors.New(msg)
}

// DefaultDir returns the directory used when the URL names none:
// $XDG_RUNTIME_DIR/airnode/registry, else os.UserCacheDir()/airnode/registry,
// else os.TempDir()/airnode-<uid>/registry. It reads the environment only.
func DefaultDir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "airnode", "registry")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "airnode", "registry")
	}
	return filepath.Join(os.TempDir(), "airnode-"+strconv.Itoa(os.Getuid()), "registry")
}
