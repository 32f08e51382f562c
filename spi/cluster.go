package spi

import "context"

// Directory is the live list of provider invokers of one reference, fed by
// registry pushes. List is called on every call: it never
// blocks and returns a slice the caller must not modify.
type Directory interface {
	// URL is the consumer's reference URL.
	URL() URL
	// List returns the invokers that can take inv now (available ones).
	List(inv *Invocation) []Invoker
	// Registry describes where the providers come from, for error messages
	// ("zookeeper://127.0.0.1:2181").
	Registry() string
}

// ClusterBuilder is the "cluster" extension point (URL key "cluster",
// default "failover"): the fault-tolerance strategy over a directory.
type ClusterBuilder interface {
	Name() string
	// Build validates the cluster's keys in u ("retries", "forks"), the
	// consumer's reference URL. Pure. A per-call key u does not set may
	// be read from a provider invoker's URL at Invoke (Invoker.URL, the
	// provider's merged with the consumer's): the bundled clusters take
	// the provider's retries, idempotent and forks as the default, as
	// Dubbo does.
	// It runs on Refer's goroutine (once more for each method with a
	// cluster key of its own), and nothing bounds it (package doc, "What the
	// kernel does not bound").
	Build(u URL) (Cluster, error)
}

// Cluster invokes through a directory, choosing providers with lb and
// applying its fault-tolerance rule. Called concurrently; blocks for the
// call. An empty directory yields an *Error with StatusServiceNotFound
// naming the service key and the registry.
type Cluster interface {
	Invoke(ctx context.Context, inv *Invocation, dir Directory, lb LoadBalance) Result
}
