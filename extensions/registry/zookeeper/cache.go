package zookeeper

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"

	"github.com/airnode/airnode/spi"
)

// cache is the optional file.cache: the last list of every service seen,
// as JSON {"service key": ["url", ...]}, rewritten atomically on change.
type cache struct {
	path string

	mu     sync.Mutex
	loaded bool
	lists  map[string][]string
}

func (c *cache) load() {
	if c.loaded {
		return
	}
	c.loaded = true
	c.lists = map[string][]string{}
	if b, err := os.ReadFile(c.path); err == nil {
		_ = json.Unmarshal(b, &c.lists)
	}
}

// get returns the cached list of key and whether there is one.
func (c *cache) get(key string) ([]spi.URL, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.load()
	raw, ok := c.lists[key]
	if !ok {
		return nil, false
	}
	out := make([]spi.URL, 0, len(raw))
	for _, s := range raw {
		if u, err := spi.Parse(s); err == nil {
			out = append(out, u)
		}
	}
	return out, true
}

// put records list for key and rewrites the file when it changed.
func (c *cache) put(key string, list []spi.URL) error {
	if c == nil {
		return nil
	}
	raw := make([]string, len(list))
	for i, u := range list {
		raw[i] = u.String()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.load()
	if old, ok := c.lists[key]; ok && equalStrings(old, raw) {
		return nil
	}
	c.lists[key] = raw
	b, err := json.MarshalIndent(c.lists, "", "  ")
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
