package zookeeper

import (
	"net/url"
	"sort"
	"sync"

	"github.com/airnode/airnode/spi"
)

// decodedNodes keeps, for each interface whose providers node was read,
// the node's children as last decoded, so that a read of an unchanged
// node (n service keys of one interface looked up one by one; each of the
// interface's subscriptions after a change) decodes and sorts nothing,
// and a read after a change decodes only the new children. Without it
// every read parsed and sorted all n entries of the interface, whichever
// one service key it was for. Safe for concurrent use.
type decodedNodes struct {
	mu      sync.Mutex
	nodes   map[string]*decodedNode      // interface -> its providers node
	decoded int64                        // child names decoded (decodeEntry), for tests
	foreign map[string]map[string]string // interface -> node name -> why preferLive dropped it
}

// decodedNode is one providers node as last read. Its slices are shared
// by every reader: nobody modifies them.
type decodedNode struct {
	index map[string]int // child name -> its index in list; -1: skipped (undecodable, or another interface or category)
	list  []spi.URL      // the providers, sorted by canonical string
	strs  []string       // strs[i] == list[i].String()
}

// decodedEntry is one child of a providers node being decoded.
type decodedEntry struct {
	name string
	u    spi.URL
	s    string
}

// decode turns the child node names of iface's providers node into
// provider URLs (fromEntry), sorted, skipping names that do not decode
// and entries of another interface or category (logged at debug when
// first seen), and returns them with their canonical strings. The slices
// are shared: callers must not modify them.
func (r *Registry) decode(iface string, children []string) ([]spi.URL, []string) {
	d := &r.decoded
	d.mu.Lock()
	defer d.mu.Unlock()
	old := d.nodes[iface]
	if old != nil && len(old.index) == len(children) {
		same := true
		for _, c := range children {
			if _, ok := old.index[c]; !ok {
				same = false
				break
			}
		}
		if same {
			return old.list, old.strs
		}
	}
	n := &decodedNode{index: make(map[string]int, len(children))}
	entries := make([]decodedEntry, 0, len(children))
	for _, c := range children {
		if old != nil {
			if i, ok := old.index[c]; ok {
				if i >= 0 {
					entries = append(entries, decodedEntry{c, old.list[i], old.strs[i]})
				} else {
					n.index[c] = -1
				}
				continue
			}
		}
		d.decoded++
		if u, ok := r.decodeEntry(iface, c); ok {
			entries = append(entries, decodedEntry{c, u, u.String()})
		} else {
			n.index[c] = -1
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].s < entries[j].s })
	n.list, n.strs = make([]spi.URL, len(entries)), make([]string, len(entries))
	for i, e := range entries {
		n.index[e.name] = i
		n.list[i], n.strs[i] = e.u, e.s
	}
	if d.nodes == nil {
		d.nodes = map[string]*decodedNode{}
	}
	d.nodes[iface] = n
	return n.list, n.strs
}

// decodeEntry decodes one child name of iface's providers node
// (fromEntry); ok is false, logged at debug, for a name that does not
// decode and an entry of another interface or category.
func (r *Registry) decodeEntry(iface, name string) (spi.URL, bool) {
	s, err := url.QueryUnescape(name)
	if err == nil {
		var e spi.URL
		if e, err = spi.Parse(s); err == nil {
			u, ok := fromEntry(e, iface)
			if !ok {
				r.log.Debug("entry of another interface or category", "interface", iface, "entry", e.Redacted())
			}
			return u, ok
		}
	}
	r.log.Debug("undecodable node", "name", name, "err", err)
	return spi.URL{}, false
}
