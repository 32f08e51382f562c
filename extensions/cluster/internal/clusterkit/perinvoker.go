package clusterkit

import (
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/airnode/airnode/spi"
)

// MaxPerInvoker bounds the invokers a PerInvoker remembers: beyond it the
// oldest is forgotten (a reference's providers come and go; a forgotten
// one is parsed again when next asked).
const MaxPerInvoker = 256

// PerInvoker caches a value derived from each provider invoker's URL,
// which is immutable (the provider URL merged with the consumer's,
// spi.MergeURL), so that a cluster reads a provider's keys once per
// invoker rather than on every call. Get scans a copy-on-write list: no
// lock and no map on a hit, a few nanoseconds for a reference's handful
// of providers. Only invokers that are pointers (the kernel's are) are
// remembered, compared by identity; any other is parsed on every Get.
// The zero value is ready to use; safe for concurrent use; must not be
// copied after first use.
type PerInvoker[T any] struct {
	mu   sync.Mutex // serialises adds
	list atomic.Pointer[[]perInvoker[T]]
}

type perInvoker[T any] struct {
	inv spi.Invoker
	v   T
}

// Get returns parse(x.URL()), computed once per invoker x.
func (c *PerInvoker[T]) Get(x spi.Invoker, parse func(spi.URL) T) T {
	if l := c.list.Load(); l != nil {
		for i := range *l {
			if (*l)[i].inv == x { // safe: only pointers are stored
				return (*l)[i].v
			}
		}
	}
	v := parse(x.URL())
	if t := reflect.TypeOf(x); t == nil || t.Kind() != reflect.Pointer {
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var old []perInvoker[T]
	if l := c.list.Load(); l != nil {
		old = *l
	}
	for _, e := range old {
		if e.inv == x { // added meanwhile
			return e.v
		}
	}
	if len(old) >= MaxPerInvoker {
		old = old[len(old)-MaxPerInvoker+1:]
	}
	next := make([]perInvoker[T], len(old), len(old)+1)
	copy(next, old)
	next = append(next, perInvoker[T]{inv: x, v: v})
	c.list.Store(&next)
	return v
}
