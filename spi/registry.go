package spi

import (
	"context"
	"errors"
	"strconv"
)

// RegistryBuilder is the "registry" extension point. It is selected by the
// scheme of the registry URL ("zookeeper://127.0.0.1:2181", "file:///tmp/x",
// "memory://", "direct://"); the default is "file". A registry whose URL
// names a file or directory gets its path without the leading "/"
// (URL.Path): "file:///tmp/x" is "/"+u.Path().
//
// The kernel's calls, in order: a reference Subscribes (its listener gets
// the first list before Subscribe returns, or soon after) and then
// Registers its consumer URL; Close of the reference Unregisters it and
// stops the subscription; an export Registers its provider URL after
// listening and Unregisters it first at Shutdown. When a subscription's
// list is empty the kernel may call Services to say which service keys
// it does list (ErrNotSupported is fine); keep it cheap or bounded by ctx.
type RegistryBuilder interface {
	// Name is the extension name, equal to the URL scheme it serves.
	Name() string
	// Build validates u and returns a Registry. It does no I/O and starts no
	// goroutine; the registry connects on first use or in Start. The
	// kernel runs it on a goroutine of its own, without the node's lock,
	// when an Export or Refer first uses the registry URL, and waits for
	// it until that Export's or Refer's ctx ends (package doc, "What the
	// kernel does not bound"): one that blocks fails them with a
	// *LeftRunningError naming `registry "x" Build`, and holds up neither
	// Shutdown nor the node's other Exports and Refers.
	Build(u URL) (Registry, error)
}

// Registry publishes providers and pushes provider lists to consumers. All
// methods are safe for concurrent use.
type Registry interface {
	// Register publishes a provider (or, with side=consumer, a consumer) URL
	// until Unregister or Close. Registering the same URL twice is a no-op.
	// May block up to ctx's deadline.
	Register(ctx context.Context, u URL) error
	// Unregister withdraws a URL registered by this registry; unknown URLs
	// are a no-op. One that cannot reach its backend returns an error
	// matching ErrNotWithdrawn.
	Unregister(ctx context.Context, u URL) error
	// Subscribe watches the providers of consumer.ServiceKey(). notify is
	// called with the full provider list once the first list is known
	// (possibly empty) and again after every change, from one goroutine at a
	// time and in order; it must not block for long. A registry that loses
	// its backend keeps quiet rather than pushing an empty list: an empty
	// list always means "there are no providers".
	Subscribe(ctx context.Context, consumer URL, notify NotifyFunc) (Subscription, error)
	// Lookup returns the current providers of consumer.ServiceKey().
	Lookup(ctx context.Context, consumer URL) ([]URL, error)
	// Services lists the service keys that have at least one provider,
	// sorted. Registries that cannot list return ErrNotSupported.
	Services(ctx context.Context) ([]string, error)
	// Close unregisters everything this registry registered, stops every
	// subscription and waits for its goroutines; idempotent.
	Close() error
}

// NotifyFunc receives a full provider list.
type NotifyFunc func(providers []URL)

// Subscription is a live Subscribe; Stop ends it and waits until notify will
// not be called again. Idempotent.
type Subscription interface {
	Stop()
}

// ErrNotSupported is returned by optional registry operations a registry
// cannot perform.
var ErrNotSupported = errors.New("registry: operation not supported")

// ErrNotWithdrawn is matched (errors.Is) by the error of an Unregister
// that could not reach the registry's backend: the entry stays listed
// until the backend drops it (ZooKeeper, when it expires the session) or
// the registry deletes it once it can. The error's text says which. The
// kernel logs it at Warn and goes on: Shutdown does not fail because of
// it, and does not say the entry was unregistered.
var ErrNotWithdrawn = errors.New("registry: entry not withdrawn")

// RegistryReach says which consumers find the providers a registry's
// Register publishes.
type RegistryReach int

// The reaches a registry's Register has (RegistryReacher.Reach), widest
// first.
const (
	// ReachShared: consumers of other processes find them (file: the
	// processes of one machine; zookeeper: of every machine). The zero
	// value, assumed for a builder that does not implement RegistryReacher.
	ReachShared RegistryReach = iota
	// ReachProcess: only consumers of the same process find them (memory).
	ReachProcess
	// ReachNone: Register publishes nothing; consumers list their
	// providers themselves (direct).
	ReachNone
)

// String returns "shared", "process" or "none".
func (r RegistryReach) String() string {
	switch r {
	case ReachShared:
		return "shared"
	case ReachProcess:
		return "process"
	case ReachNone:
		return "none"
	}
	return "RegistryReach(" + strconv.Itoa(int(r)) + ")"
}

// RegistryReacher is the optional interface of a RegistryBuilder that says
// whom its registries' Register reaches, so that a provider host
// (airnode serve) can say, before it listens, that no other process will
// find its providers. Reach is pure, cheap and safe for concurrent use.
// A builder without it is taken to be ReachShared.
type RegistryReacher interface {
	Reach() RegistryReach
}

// ReadOnlyRegistry is the optional interface of a RegistryBuilder whose
// registries only read provider lists (a static file, a discovery service
// the node may not write to): their Register answers ErrNotSupported.
// ReadOnly true lets a provider host (airnode serve) refuse the registry
// as a "read-only registry" before it listens, where Export would fail
// only at Register, after listening; a withdraw dry-run cannot tell,
// since Unregister of a URL never registered is a no-op. Pure, cheap and
// safe for concurrent use. A builder without it is taken to be writable.
// A plugin registry's builder is asked in the plugin and its answer
// forwarded to the host.
type ReadOnlyRegistry interface {
	ReadOnly() bool
}

// RegistryHealth is the optional interface of a Registry that knows when
// the URLs it registered are not published (its backend lost them), so
// that a provider host can report it: `airnode serve` lists the error's
// text as a warning in /stats and sets airnode_health_warning while
// Health returns non-nil (not a 503 from /ready: every provider sees a
// registry outage at once). ZooKeeper: the
// session expired and the provider's ephemeral entries are gone until a
// new session re-creates them, or an entry Register queued for want of a
// session (check=false) has not been created yet. A short disconnection within the session
// timeout is not such a loss: the entries are still there. Health is
// cheap (no I/O, it reads the registry's state), never blocks, and is
// safe for concurrent use; a registry without it is taken to publish
// what Register accepted.
type RegistryHealth interface {
	Health() error
}

// RegistryUnreachable is the optional capability of a Registry that can
// say why it cannot reach its backend now: Unreachable returns that cause
// ("zookeeper registry: no session with 127.0.0.1:2181: unreachable for
// 900ms (since 22:10:01 UTC; connect.timeout=5s): last dial: dial tcp
// 127.0.0.1:2181: connect: connection refused"), "" while it reaches it
// or does not know. The kernel asks it when a Refer's ctx ran out while
// the registry's Subscribe was still running, or an Export's while its
// Register was (the *LeftRunningError then says why, not only that it
// did not return). Cheap (no I/O), never
// blocks, safe for concurrent use.
type RegistryUnreachable interface {
	Unreachable() string
}

// RegistryListing is the optional capability of a Registry that can tell
// an entry it accepted but never sent to its backend: Listed(u) is false
// for u, registered by this registry, while no create of its entry has
// been sent (zookeeper's check=false queues a provider's entry while
// there is no session), so that no consumer can have listed it, and its
// Unregister only takes it off the queue (nil). The kernel's Shutdown
// does not wait shutdown.wait's default for such entries: no consumer
// has to learn that they are gone. true otherwise, unknown URLs
// included. Cheap, never blocks, safe for concurrent use; a registry
// without it is taken to list what Register accepted.
type RegistryListing interface {
	Listed(u URL) bool
}

// OneShotRegistry is the optional capability of a Registry that fits
// what it logs to a one-shot process (airnode call: a few calls, then
// exit), where a notice meant for a long-running node would be repeated
// by every run: the zookeeper registry then says the Dubbo Admin rules
// it does not apply in one line rather than one per place that holds
// some. The kernel calls UseOneShot right after Build, before any
// Register or Subscribe, for a node marked one-shot (kernel.WithOneShot);
// a registry without it logs as for any node. Cheap, never blocks.
type OneShotRegistry interface {
	UseOneShot()
}
