package directory

import "github.com/airnode/airnode/spi"

// KeyTimestamp is the provider URL key holding when the provider was
// exported, in milliseconds since the epoch (set at export; Dubbo's
// "timestamp"). Dedup keeps the entry with the highest one.
const KeyTimestamp = "timestamp"

// dedupKey identifies one provider socket serving one service: protocol,
// address and service key. Two entries with one key are one provider
// listed twice.
func dedupKey(p spi.URL) string {
	return p.Scheme() + "://" + p.Address() + "/" + p.ServiceKey()
}

// newest returns providers with one entry per protocol, address and
// service key (dedupKey), in their order: of entries sharing a key it
// keeps the one with the highest timestamp (KeyTimestamp; absent or
// malformed counts as 0), on a tie the one the directory saw last (first
// listed in a later push, or later in the same push). A provider killed
// and restarted on its port within the registry's session timeout is
// listed twice in ZooKeeper until the old session expires:
// counted twice it got a double share of the calls, and the
// old entry's timestamp gave the cold restarted process the old one's
// warm-up weight. gRPC's resolver likewise de-duplicates addresses.
// A registry that can tell which of two such entries a live provider
// wrote leaves the other out before this (ZooKeeper: a persistent node
// beside a provider's ephemeral one, written by hand). Dropped entries
// are logged at Debug. Called with applyMu held; it
// records when each listed URL was first seen.
func (d *Directory) newest(providers []spi.URL) []spi.URL {
	seen := make(map[string]uint64, len(providers))
	for _, p := range providers {
		k := p.String()
		if _, ok := seen[k]; ok {
			continue
		}
		if s, ok := d.seen[k]; ok {
			seen[k] = s
		} else {
			d.seq++
			seen[k] = d.seq
		}
	}
	d.seen = seen
	at := make(map[string]int, len(providers)) // dedup key -> index in out
	out := make([]spi.URL, 0, len(providers))
	for _, p := range providers {
		k := dedupKey(p)
		j, dup := at[k]
		if !dup {
			at[k] = len(out)
			out = append(out, p)
			continue
		}
		kept, dropped := out[j], p
		if newer(p, out[j], seen) {
			kept, dropped = p, out[j]
			out[j] = p
		}
		if !kept.Equal(dropped) {
			d.log.Debug("provider listed twice at one address; keeping the newest entry (a restarted provider's old entry stays until its registry session expires)",
				"provider", p.Address(), "kept", kept.String(), "dropped", dropped.String())
		}
	}
	return out
}

// newer reports whether a is a newer entry than b: a higher timestamp,
// or an equal one and seen later.
func newer(a, b spi.URL, seen map[string]uint64) bool {
	ta, tb := timestamp(a), timestamp(b)
	if ta != tb {
		return ta > tb
	}
	return seen[a.String()] > seen[b.String()]
}

func timestamp(u spi.URL) int64 {
	t, err := u.Int(KeyTimestamp, 0)
	if err != nil {
		return 0
	}
	return t
}
