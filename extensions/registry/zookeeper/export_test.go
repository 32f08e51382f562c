package zookeeper

import (
	"time"

	"github.com/airnode/airnode/spi"
)

// DecodedEntries returns how many provider node names r has decoded
// (parsed) since it was built.
func DecodedEntries(r spi.Registry) int64 {
	z := r.(*Registry)
	z.decoded.mu.Lock()
	defer z.decoded.mu.Unlock()
	return z.decoded.decoded
}

// WatchReads returns how many times r's subscriptions have read a
// providers node with a watch (ChildrenW) since r was built.
func WatchReads(r spi.Registry) int64 { return r.(*Registry).watchReads.Load() }

// Watches returns how many interfaces r's subscriptions watch (one
// shared watch and loop each).
func Watches(r spi.Registry) int {
	z := r.(*Registry)
	z.mu.Lock()
	defer z.mu.Unlock()
	return len(z.watches)
}

// SetQueuedWarnEvery sets how often the Warn that queued provider
// entries are not in ZooKeeper is repeated (a minute) until the test
// ends.
func SetQueuedWarnEvery(t interface{ Cleanup(func()) }, d time.Duration) {
	old := queuedWarnEvery
	queuedWarnEvery = d
	t.Cleanup(func() { queuedWarnEvery = old })
}
