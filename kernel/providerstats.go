package kernel

import (
	"sync"
	"time"

	"github.com/airnode/airnode/spi"
)

// ProviderStats returns what the node's consumer sees of each provider:
// one spi.ProviderStats per provider invoker of each of its references
// (the directory's providers, connecting and ejected ones included), read
// from the Stats every remote invoker keeps anyway, so that a scrape costs
// the calls nothing. Two references of one service key, or a reference of
// several groups reaching one address twice, give two entries with the
// same Service and Provider; readers sum them. Safe for concurrent use;
// nil after Shutdown.
func (n *Node) ProviderStats() []spi.ProviderStats {
	n.mu.Lock()
	refs := append([]*Reference(nil), n.references...)
	n.mu.Unlock()
	var out []spi.ProviderStats
	now := spi.Mono()
	for _, r := range refs {
		for _, inv := range r.dir.All() {
			out = append(out, providerStatsOf(r.key, inv, now))
		}
	}
	return out
}

// ReferenceKeys returns the service key of each open reference of the
// node (one per reference, in the order they were made), the references
// ProviderStats reads the providers of: with it a reader can say that a
// reference has no provider at all (spi.ReferencesUser). Safe for
// concurrent use; nil after Shutdown.
func (n *Node) ReferenceKeys() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.references) == 0 {
		return nil
	}
	keys := make([]string, len(n.references))
	for i, r := range n.references {
		keys[i] = r.key
	}
	return keys
}

// providerStatsOf reads one provider invoker of the reference of service
// key service, at now (spi.Mono()).
func providerStatsOf(service string, inv spi.Invoker, now time.Duration) spi.ProviderStats {
	picked := inv // what the balancers pick from: its URL says their weight

	for { // the per-provider filters (chain) around the remote invoker
		f, ok := inv.(*filterInvoker)
		if !ok {
			break
		}
		inv = f.Invoker
	}
	ps := spi.ProviderStats{Service: service, Provider: inv.URL().Address(), Available: inv.Available(), Invoker: picked}
	ps.Connected = ps.Available // an invoker the kernel did not make: what it says
	// weight 0 is in the entry, connected or not: no balancer picks it
	// (a malformed weight is the default to the balancers, so not 0)
	if w, err := inv.URL().Int("weight", DefaultWeight); err == nil && w == 0 {
		ps.WeightZero, ps.Available = true, false
	}
	if st := inv.Stats(); st != nil {
		ps.Stats = st.Snapshot()
	}
	if ri, ok := inv.(*remoteInvoker); ok {
		ps.FailuresByStatus = ri.fails.snapshot()
		ps.Connected = ri.connected()
		// read, not ended: the directory's next look ends an ejection
		// that is over (ejectedNow), with its log line
		// (or that its liveness ping holds: holdForCheck)
		ps.Ejected = ri.out.ejected.Load() && (now < time.Duration(ri.out.until.Load()) || ri.out.held.Load())
	}
	return ps
}

// useProviderStats hands ProviderStats to every filter builder of the
// node's catalogs that takes it (spi.ProviderStatsUser: the metrics
// filter), and ReferenceKeys to those that take them
// (spi.ReferencesUser), keeping what each returns for releaseProviderStats.
func (n *Node) useProviderStats() {
	for _, name := range n.cat.Filter.Names() {
		b, err := n.cat.Filter.Get(name)
		if err != nil {
			continue
		}
		if u, ok := b.(spi.ProviderStatsUser); ok {
			if release := u.UseProviderStats(n.ProviderStats); release != nil {
				n.statsRelease = append(n.statsRelease, release)
			}
		}
		if u, ok := b.(spi.ReferencesUser); ok {
			if release := u.UseReferences(n.ReferenceKeys); release != nil {
				n.statsRelease = append(n.statsRelease, release)
			}
		}
	}
}

// releaseProviderStats tells the builders useProviderStats reached that
// the node is gone (the end of Shutdown).
func (n *Node) releaseProviderStats() {
	n.mu.Lock()
	rs := n.statsRelease
	n.statsRelease = nil
	n.mu.Unlock()
	for _, release := range rs {
		release()
	}
}

// failCounts counts a remote invoker's failed calls by status, next to
// its Stats' total of them: only a failure takes its lock, a success
// costs nothing. Safe for concurrent use; the zero value is ready.
type failCounts struct {
	mu sync.Mutex
	n  map[spi.Status]int64
}

// add counts one failure of status st.
func (f *failCounts) add(st spi.Status) {
	f.mu.Lock()
	if f.n == nil {
		f.n = make(map[spi.Status]int64, 2)
	}
	f.n[st]++
	f.mu.Unlock()
}

// snapshot copies the counts; nil when there were no failures.
func (f *failCounts) snapshot() map[spi.Status]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.n) == 0 {
		return nil
	}
	out := make(map[spi.Status]int64, len(f.n))
	for k, v := range f.n {
		out[k] = v
	}
	return out
}
