package consistenthash

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/airnode/airnode/spi"
)

// URL keys and defaults.
const (
	// KeyNodes is the number of virtual nodes per provider on the ring.
	KeyNodes = "hash.nodes"
	// KeyArguments lists the indexes of the arguments that are hashed,
	// comma-separated ("0", "0,2"), each index once.
	KeyArguments = "hash.arguments"

	DefaultNodes     = 160
	DefaultArguments = "0"
	// MaxNodes bounds hash.nodes (the ring holds providers × nodes points).
	MaxNodes = 65536
)

// config is the resolved configuration of one method (or the service).
type config struct {
	nodes int
	args  []int
	src   string // the hash.arguments key as set ("" when defaulted)
	value string // its value
	ring  ringCache

	warned warnedMethods // the methods whose calls hash nothing were warned of
}

// maxWarnedMethods bounds warnedMethods: past it no more methods are
// warned of (a balancer's methods are a service's, a handful).
const maxWarnedMethods = 64

// warnedMethods is the set of methods a config's "hashes nothing"
// warning was logged for, so that it is logged once per method of the
// balancer (a reference's, or one method's). It is read on the calls
// that hash nothing only: an atomic load and a scan of a few names, no
// lock and no allocation; the lock is taken once per method warned of.
type warnedMethods struct {
	full  atomic.Bool              // maxWarnedMethods reached: warn of no more
	names atomic.Pointer[[]string] // copy on write; nil: none yet
	mu    sync.Mutex               // one writer at a time
}

// first reports whether method was not warned of yet, recording it.
func (w *warnedMethods) first(method string) bool {
	if w.full.Load() || w.has(method) {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.full.Load() || w.has(method) {
		return false
	}
	var names []string
	if p := w.names.Load(); p != nil {
		names = slices.Clone(*p)
	}
	names = append(names, method)
	w.names.Store(&names)
	w.full.Store(len(names) >= maxWarnedMethods)
	return true
}

func (w *warnedMethods) has(method string) bool {
	p := w.names.Load()
	return p != nil && slices.Contains(*p, method)
}

// missesAll reports whether none of the configured argument indexes is
// one of args': every such call hashes alike.
func (c *config) missesAll(args []any) bool {
	for _, i := range c.args {
		if i < len(args) {
			return false
		}
	}
	return true
}

func parseConfig(u spi.URL, method string) (*config, error) {
	c := &config{nodes: DefaultNodes, args: []int{0}}
	n, err := u.MethodIntIn(method, KeyNodes, DefaultNodes, 1, MaxNodes, "")
	if err != nil {
		return nil, err
	}
	c.nodes = int(n)
	if v, src, ok := u.MethodParam(method, KeyArguments); ok {
		c.args, c.src, c.value = c.args[:0], src, v
		for _, f := range strings.Split(v, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 {
				return nil, &spi.ParamError{Key: src, Value: v, Want: "comma-separated argument indexes such as 0 or 0,1"}
			}
			if slices.Contains(c.args, i) {
				// hashing an argument twice spreads the keys no better:
				// most likely a typo for another index (0,1)
				return nil, &spi.ParamError{Key: src, Value: v, Want: "comma-separated argument indexes, each given once, such as 0 or 0,1 (" + strconv.Itoa(i) + " is given twice)"}
			}
			c.args = append(c.args, i)
		}
	}
	return c, nil
}
