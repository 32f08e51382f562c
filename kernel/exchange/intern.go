package exchange

import (
	"maps"
	"sync"
	"sync/atomic"
)

// Service keys and method names repeat on every request; the provider
// turns their bytes into strings through a shared table instead of
// allocating two strings per request. The table is copied on write (a
// name not seen before) and read without a lock; it is bounded so that a
// consumer sending random names costs at most internMax × internMaxLen
// bytes, after which unknown names are simply allocated.
const (
	internMax    = 1024
	internMaxLen = 128
)

var interned struct {
	m  atomic.Pointer[map[string]string]
	mu sync.Mutex // serializes writers
}

// intern returns b as a string, shared with earlier calls for the same
// bytes when the table holds it.
func intern(b []byte) string {
	if m := interned.m.Load(); m != nil {
		if s, ok := (*m)[string(b)]; ok { // no allocation: map index by string(b)
			return s
		}
	}
	s := string(b)
	if len(b) > internMaxLen {
		return s
	}
	interned.mu.Lock()
	defer interned.mu.Unlock()
	old := interned.m.Load()
	if old != nil && len(*old) >= internMax {
		return s
	}
	m := map[string]string{}
	if old != nil {
		m = maps.Clone(*old)
	}
	m[s] = s
	interned.m.Store(&m)
	return s
}
