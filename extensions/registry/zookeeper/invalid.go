package zookeeper

import (
	"context"
	"fmt"
	"net/url"
	"sort"

	"github.com/airnode/airnode/spi"
)

// Invalid is a child of a providers node that Lookup and Subscribe leave
// out, so that no consumer sees it: a name that is not a URL-encoded URL,
// or the URL of another interface or category, and a persistent node at
// the address of a live provider's entry (preferLive). Name is the child's name,
// Path its node path, Why the reason.
type Invalid struct {
	Name, Path, Why string
}

// Invalid returns the children of the providers node of consumer's
// interface that Lookup leaves out (registry ls shows them, as it shows
// the file registry's invalid entries), sorted by name. Entries Lookup
// does return but consumers skip (a scheme other than airnode://, no
// port, enabled=false) are not in it: the consumer says why it skips
// each. It answers from the node as last read (by Lookup or a
// subscription: registry ls reads each interface's node once, however
// many service keys it has), reading it with Lookup when it has not been
// read; with no session and nothing read, nil.
func (r *Registry) Invalid(ctx context.Context, consumer spi.URL) ([]Invalid, error) {
	iface, _, err := consumerOf(consumer)
	if err != nil {
		return nil, err
	}
	names, read := r.decoded.skipped(iface)
	if !read {
		if _, err := r.Lookup(ctx, consumer); err != nil {
			return nil, err
		}
		names, _ = r.decoded.skipped(iface)
	}
	node := r.categoryPath(iface, Providers)
	var out []Invalid
	for _, c := range names {
		if why := invalidEntry(iface, c); why != "" {
			out = append(out, Invalid{Name: c, Path: node + "/" + c, Why: why})
		}
	}
	names, why := r.decoded.foreignNames(iface)
	for _, c := range names {
		out = append(out, Invalid{Name: c, Path: node + "/" + c, Why: why[c]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// skipped returns, sorted, the child names of iface's providers node as
// last decoded that decode left out, and whether the node was decoded.
func (d *decodedNodes) skipped(iface string) ([]string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.nodes[iface]
	if n == nil {
		return nil, false
	}
	var names []string
	for c, i := range n.index {
		if i < 0 {
			names = append(names, c)
		}
	}
	sort.Strings(names)
	return names, true
}

// invalidEntry says why the child name of iface's providers node is left
// out by decodeEntry, "" when it is not.
func invalidEntry(iface, name string) string {
	s, err := url.QueryUnescape(name)
	if err != nil {
		return fmt.Sprintf("not a URL-encoded URL: %v", err)
	}
	e, err := spi.Parse(s)
	if err != nil {
		return fmt.Sprintf("not a URL: %v", err)
	}
	if c, set := e.Param(KeyCategory); set && c != Providers {
		return fmt.Sprintf("URL of category %q in a providers node: %s", c, e.Redacted())
	}
	if e.Interface() != iface {
		return fmt.Sprintf("URL of interface %q in the providers node of %q: %s", e.Interface(), iface, e.Redacted())
	}
	return ""
}
