package directory

import (
	"sync"
	"sync/atomic"

	"github.com/airnode/airnode/spi"
)

// Epoch counts the changes of the availability of the invokers that share
// it: the kernel's provider invokers of one node share their connection
// pool's. The zero value is ready to use; safe for concurrent use.
type Epoch struct{ n atomic.Uint64 }

// Bump records a change. Call it after the change is visible to
// Available (a connection's new state stored, an ejection set), never
// before: List then asks the invokers again on its next call.
func (e *Epoch) Bump() { e.n.Add(1) }

// Load returns the number of changes so far.
func (e *Epoch) Load() uint64 { return e.n.Load() }

// Watched is implemented by an invoker whose Available changes only
// together with a Bump of its epoch (made after the change), so that List
// need not ask it on every call (gRPC's picker, rebuilt when a
// connection's state changes, in spirit). AvailabilityEpoch returns the
// epoch, the same one for the invoker's life; nil means the invoker is
// not watched after all (a wrapper around one that is not).
type Watched interface {
	AvailabilityEpoch() *Epoch
}

// availability is List's cache of one snapshot's available invokers: the
// list as of the epochs' values read just before its invokers were asked.
// A change bumps an epoch after it is visible, so a change made while a
// list is built leaves that list stale (its epoch value is older), never
// lost: the next List builds it again. Building it (O(providers)) happens
// on the first List after a change; every other List costs one pointer
// load and one atomic load per distinct epoch (one, in the kernel).
type availability struct {
	mu   sync.Mutex // one build at a time
	view atomic.Pointer[availView]
}

type availView struct {
	polled bool          // an invoker is not Watched: every List asks every invoker
	epochs []*Epoch      // the distinct epochs of the snapshot's invokers
	at     []uint64      // their values read before list was built
	list   []spi.Invoker // the available invokers then
}

// current reports whether no epoch moved since v was built.
func (v *availView) current() bool {
	for i, e := range v.epochs {
		if e.Load() != v.at[i] {
			return false
		}
	}
	return true
}

// list returns the available invokers of all (shared: do not modify).
func (a *availability) list(all []spi.Invoker) []spi.Invoker {
	if v := a.view.Load(); v != nil {
		if v.polled {
			return available(all)
		}
		if v.current() {
			return v.list
		}
	}
	return a.build(all)
}

// build asks every invoker of all and caches the result.
func (a *availability) build(all []spi.Invoker) []spi.Invoker {
	a.mu.Lock()
	defer a.mu.Unlock()
	v := a.view.Load()
	if v != nil && !v.polled && v.current() {
		return v.list // built by another caller meanwhile
	}
	var epochs []*Epoch
	if v != nil {
		epochs = v.epochs
	} else {
		for _, inv := range all {
			w, ok := inv.(Watched)
			var e *Epoch
			if ok {
				e = w.AvailabilityEpoch()
			}
			if e == nil {
				a.view.Store(&availView{polled: true})
				return available(all)
			}
			if !containsEpoch(epochs, e) {
				epochs = append(epochs, e)
			}
		}
	}
	at := make([]uint64, len(epochs))
	for i, e := range epochs {
		at[i] = e.Load() // before asking: a change from now on leaves the view stale
	}
	list := available(all)
	a.view.Store(&availView{epochs: epochs, at: at, list: list})
	return list
}

func containsEpoch(l []*Epoch, e *Epoch) bool {
	for _, x := range l {
		if x == e {
			return true
		}
	}
	return false
}

// available returns the invokers of all that are available: all itself
// when every one is (no allocation), else a new slice.
func available(all []spi.Invoker) []spi.Invoker {
	for i, inv := range all {
		if !inv.Available() {
			out := make([]spi.Invoker, 0, len(all)-1)
			out = append(out, all[:i]...)
			for _, inv := range all[i+1:] {
				if inv.Available() {
					out = append(out, inv)
				}
			}
			return out
		}
	}
	return all
}
