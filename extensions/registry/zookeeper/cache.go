package zookeeper

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/airnode/airnode/spi"
)

// cacheRefresh is how old a service's saved time may grow before a list
// read from ZooKeeper that did not change is written again, so that the
// age the cache reports (CacheNote.Saved) is the time of the last list
// read, to within cacheRefresh, at most one write per service per
// cacheRefresh.
const cacheRefresh = time.Minute

// cache is the optional file.cache: the last providers list of every
// interface seen (all of its groups and versions, as its providers node
// holds them) and when it was read from ZooKeeper, as JSON
//
//	{"lists": {"interface": ["url", ...]}, "saved": {"interface": "RFC 3339 time"}}
//
// rewritten atomically on change. A file of the earlier form, the bare
// {"key": [...]} object, is read with unknown saved times. Files written
// before the Dubbo layout were keyed by service key (group/interface:version):
// an entry whose key is not an interface name is never read (a key of no
// group and no version is the interface's name, and its list is the one
// that interface's consumers want).
type cache struct {
	path string

	mu     sync.Mutex
	loaded bool
	lists  map[string][]string
	saved  map[string]time.Time
}

// cacheFile is the file's form.
type cacheFile struct {
	Lists map[string][]string  `json:"lists"`
	Saved map[string]time.Time `json:"saved,omitempty"`
}

func (c *cache) load() {
	if c.loaded {
		return
	}
	c.loaded = true
	c.lists, c.saved = map[string][]string{}, map[string]time.Time{}
	b, err := os.ReadFile(c.path)
	if err != nil {
		return
	}
	var f cacheFile
	if json.Unmarshal(b, &f) == nil && f.Lists != nil {
		c.lists = f.Lists
		if f.Saved != nil {
			c.saved = f.Saved
		}
		return
	}
	_ = json.Unmarshal(b, &c.lists) // the earlier form
}

// get returns the cached list of key, when it was saved (zero: unknown),
// and whether there is one.
func (c *cache) get(key string) ([]spi.URL, time.Time, bool) {
	if c == nil {
		return nil, time.Time{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.load()
	raw, ok := c.lists[key]
	if !ok {
		return nil, time.Time{}, false
	}
	out := make([]spi.URL, 0, len(raw))
	for _, s := range raw {
		if u, err := spi.Parse(s); err == nil {
			out = append(out, u)
		}
	}
	return out, c.saved[key], true
}

// keys returns the service keys of the providers cached under their
// interface, and the oldest saved time of the lists read (zero when one is
// unknown).
func (c *cache) keys() ([]string, time.Time, bool) {
	if c == nil {
		return nil, time.Time{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.load()
	var out []string
	seen := map[string]bool{}
	var oldest time.Time
	unknown := false
	for k, l := range c.lists {
		if !isInterfaceName(k) {
			continue // the earlier layout's service key
		}
		n := len(out)
		for _, s := range l {
			u, err := spi.Parse(s)
			if err != nil || u.Interface() != k || seen[u.ServiceKey()] {
				continue
			}
			seen[u.ServiceKey()] = true
			out = append(out, u.ServiceKey())
		}
		if len(out) == n {
			continue
		}
		switch s := c.saved[k]; {
		case s.IsZero():
			unknown = true
		case oldest.IsZero() || s.Before(oldest):
			oldest = s
		}
	}
	if unknown {
		oldest = time.Time{}
	}
	return out, oldest, len(c.lists) > 0
}

// put records list (canonical URL strings, which put keeps: the caller
// must not modify them) for key, read from ZooKeeper at now, and rewrites
// the file when the list changed or its saved time is cacheRefresh old.
func (c *cache) put(key string, raw []string, now time.Time) error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.load()
	if old, ok := c.lists[key]; ok && equalStrings(old, raw) && now.Sub(c.saved[key]) < cacheRefresh {
		return nil
	}
	c.lists[key] = raw
	c.saved[key] = now.UTC().Truncate(time.Second)
	b, err := json.MarshalIndent(cacheFile{Lists: c.lists, Saved: c.saved}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(c.path), filepath.Base(c.path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), c.path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
