package zookeeper

import "github.com/airnode/airnode/spi"

// DecodedEntries returns how many provider node names r has decoded
// (parsed) since it was built.
func DecodedEntries(r spi.Registry) int64 {
	z := r.(*Registry)
	z.decoded.mu.Lock()
	defer z.decoded.mu.Unlock()
	return z.decoded.decoded
}
