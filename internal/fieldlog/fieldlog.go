// Package fieldlog remembers which struct fields consumers sent that a
// provider's argument types lack, so that a provider (an in-process
// service in the kernel, a plugin service in the sdk) logs each (method,
// field) once when it ignores it for a consumer newer than itself. The
// keys come from consumers, so at most Max are remembered; after that
// nothing more is logged.
package fieldlog

import "sync"

// Max is how many (method, field) pairs one service remembers and logs.
const Max = 100

// Seen is the set of (method, field) pairs one service has logged. The
// zero value is empty and ready to use; safe for concurrent use.
type Seen struct {
	mu   sync.Mutex
	seen map[[2]string]struct{}
}

// First reports whether field, in method, is new (log it) and whether it
// is the last pair that will be remembered (say so in that line).
func (u *Seen) First(method, field string) (log, last bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	k := [2]string{method, field}
	if _, ok := u.seen[k]; ok || len(u.seen) >= Max {
		return false, false
	}
	if u.seen == nil {
		u.seen = map[[2]string]struct{}{}
	}
	u.seen[k] = struct{}{}
	return true, len(u.seen) == Max
}
