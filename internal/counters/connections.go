package counters

import (
	"slices"
	"sync"
)

// Connections lists the connection states of this process's registries
// that hold a connection to a server (the ZooKeeper registry's session),
// which package extensions/filter/metrics exports as
// airnode_registry_connected{registry} when scraped. Unlike the counters,
// it takes a mutex: at a registry's first connection and its Close, and
// at a scrape; never on a call's path.
type Connections struct {
	mu   sync.Mutex
	next int
	m    map[int]connection
}

type connection struct {
	name      string
	connected func() bool
}

// RegistryConnections is the process's registries' Connections.
var RegistryConnections Connections

// Add lists a connection named name ("zookeeper://h1:2181,h2:2181"),
// whose state connected reports when read (cheap, no I/O, safe for
// concurrent use), until the returned remove is called (idempotent).
func (c *Connections) Add(name string, connected func() bool) (remove func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[int]connection{}
	}
	id := c.next
	c.next++
	c.m[id] = connection{name: name, connected: connected}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.m, id)
	}
}

// ConnectionState is one name's state in Connections.States.
type ConnectionState struct {
	Name string
	// Connected is true when every connection listed under Name is
	// connected: two registries of one process on one ensemble are one
	// series, which says 0 while either has no session.
	Connected bool
}

// States reads every listed connection now and returns one state per
// name, sorted by name.
func (c *Connections) States() []ConnectionState {
	c.mu.Lock()
	list := make([]connection, 0, len(c.m))
	for _, x := range c.m {
		list = append(list, x)
	}
	c.mu.Unlock()
	byName := map[string]bool{}
	for _, x := range list {
		up := x.connected()
		if was, seen := byName[x.name]; seen {
			up = up && was
		}
		byName[x.name] = up
	}
	out := make([]ConnectionState, 0, len(byName))
	for n, up := range byName {
		out = append(out, ConnectionState{Name: n, Connected: up})
	}
	slices.SortFunc(out, func(a, b ConnectionState) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}
