package consistenthash

import (
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, the value of the URL key "loadbalance".
const Name = "consistenthash"

// Builder builds consistent-hash balancers. The zero value is ready to use.
type Builder struct{ opts []warmup.Option }

// New returns a Builder whose balancers log malformed weights through opts.
func New(opts ...warmup.Option) Builder { return Builder{opts: opts} }

// Name returns "consistenthash".
func (Builder) Name() string { return Name }

// Build validates hash.nodes and hash.arguments, service-level and for
// every method that sets them in either spelling, methods.<m>.<key> or
// Dubbo's <m>.<key> (spi.URL.MethodsSetting, resolved by MethodParam as
// the kernel resolves <m>.timeout); a malformed value is a
// *spi.ParamError naming the key and the value.
func (b Builder) Build(u spi.URL) (spi.LoadBalance, error) {
	def, err := parseConfig(u, "")
	if err != nil {
		return nil, err
	}
	bl := &Balancer{w: warmup.New(b.opts...), def: def}
	for _, m := range u.MethodsSetting(KeyNodes, KeyArguments) {
		c, err := parseConfig(u, m)
		if err != nil {
			return nil, err
		}
		if bl.methods == nil {
			bl.methods = make(map[string]*config)
		}
		bl.methods[m] = c
	}
	return bl, nil
}

// Balancer is a consistent-hash balancer.
type Balancer struct {
	w       *warmup.Weigher
	def     *config
	methods map[string]*config // read-only after Build
}

// Select hashes the configured arguments of inv and returns the provider
// owning the first ring point at or after the hash. Providers with weight 0
// are left out; nil is returned when no provider has a positive weight. When
// several invokers share the owner's address (an old and a new registration
// during a restart) the first in the list is returned.
func (b *Balancer) Select(invokers []spi.Invoker, inv *spi.Invocation) spi.Invoker {
	c := b.def
	var args []any
	if inv != nil {
		args = inv.Args
		if mc := b.methods[inv.Method]; mc != nil {
			c = mc
		}
	}
	if inv != nil && c.missesAll(args) && c.warned.first(inv.Method) {
		b.warnHashesNothing(c, inv.Method, len(args))
	}
	h := hashArgs(args, c.args)
	lv := c.ring.view.Load()
	if lv == nil || !lv.matches(invokers) {
		lv = c.ring.viewOf(invokers, b.w, c.nodes)
	}
	if lv.r == nil {
		return nil
	}
	return invokers[lv.pick[lv.r.walk(h, lv.pick)]]
}

// warnHashesNothing logs that calls of method hash nothing, so every one
// goes to the same provider: a hash.arguments that was set (c.src) names
// none of their arguments, or, with the default, the method is called
// with no argument at all (Info). Select logs it once per method
// (config.warned).
func (b *Balancer) warnHashesNothing(c *config, method string, nargs int) {
	if c.src != "" {
		b.w.Logger().Warn(c.src+" names no argument of the call, so every such call hashes alike and goes to one provider (argument indexes start at 0)",
			"loadbalance", Name, "key", c.src, "value", c.value, "method", method, "arguments", nargs)
		return
	}
	b.w.Logger().Warn("method "+method+" is called with no argument, so consistenthash has nothing to hash: every call of it goes to one provider (give it another balancer: methods."+method+".loadbalance=roundrobin)",
		"loadbalance", Name, "key", KeyArguments, "value", DefaultArguments, "method", method, "arguments", nargs)
}

// Affinity reports true: the same key must reach the same provider from
// every consumer, so the kernel gives Select the providers only once their
// first connection attempts have ended (spi.AffinityLoadBalance).
func (b *Balancer) Affinity() bool { return true }

// listView is the ring of one invoker list with, for each ring address, the
// index of the first eligible invoker at that address (-1: none in this
// list), so that an unchanged list is served with one memcmp of 16 bytes
// per invoker (warmup.SameList) and no URL read.
type listView struct {
	list []spi.Invoker // nil: not cacheable (an invoker type is not comparable)
	r    *ring         // nil when no invoker has a positive weight
	pick []int32
}

func (lv *listView) matches(invokers []spi.Invoker) bool {
	// lv.list holds comparable types only, so SameList never panics.
	return lv.list != nil && warmup.SameList(lv.list, invokers)
}

// viewOf computes the view of invokers and caches it when the list is
// cacheable. The current ring is kept when the list's addresses are all on
// it and cover at least half of it: a ring without some addresses is exactly
// the ring with their points skipped (walk), so a provider leaving, or a
// failover retry over the providers not tried yet, costs no rebuild.
// Otherwise (a new address, or most addresses gone) the ring is rebuilt.
func (c *ringCache) viewOf(invokers []spi.Invoker, w *warmup.Weigher, nodes int) *listView {
	var fp fingerprint
	cacheable := true
	for _, x := range invokers {
		u := x.URL()
		if w.Configured(u) > 0 {
			fp.add(u.Host(), u.Port())
		}
		cacheable = cacheable && reflect.TypeOf(x).Comparable()
	}
	lv := &listView{}
	if fp.n > 0 {
		r := c.cur.Load()
		pick, ok := picks(r, invokers, w)
		if !ok {
			r = c.get(fp, invokers, w, nodes)
			pick, _ = picks(r, invokers, w)
		}
		lv.r, lv.pick = r, pick
	}
	if cacheable {
		lv.list = slices.Clone(invokers)
		c.view.Store(lv)
	}
	return lv
}

// picks maps each address of r to the first eligible invoker at that
// address. It fails when r is nil, an eligible invoker's address is not on
// r, or fewer than half of r's addresses have an invoker.
func picks(r *ring, invokers []spi.Invoker, w *warmup.Weigher) ([]int32, bool) {
	if r == nil {
		return nil, false
	}
	pick := make([]int32, len(r.hosts))
	for i := range pick {
		pick[i] = -1
	}
	present := 0
	for j, x := range invokers {
		u := x.URL()
		if w.Configured(u) == 0 {
			continue
		}
		i, ok := r.index[spi.HostPort{Host: u.Host(), Port: u.Port()}]
		if !ok {
			return nil, false
		}
		if pick[i] < 0 {
			pick[i] = int32(j)
			present++
		}
	}
	return pick, present > 0 && 2*present >= len(r.hosts)
}

// fingerprint identifies a multiset of addresses independently of order:
// count, sum and xor of 64-bit address hashes. Computed without allocating.
type fingerprint struct {
	n        int
	sum, xor uint64
}

func (f *fingerprint) add(host string, port int) {
	h := mix(fnvString(fnvOffset, host) ^ uint64(port)*fnvPrime)
	f.n++
	f.sum += h
	f.xor ^= h
}

// ring is an immutable hash ring.
type ring struct {
	fp     fingerprint
	points []uint64 // sorted
	owners []int32  // owners[i] indexes hosts for points[i]
	hosts  []spi.HostPort
	index  map[spi.HostPort]int32 // hosts[index[hp]] == hp
}

// walk returns the index in hosts of the owner of the first point at or
// after h, wrapping around, whose owner has an invoker (pick >= 0); pick
// has at least one.
func (r *ring) walk(h uint64, pick []int32) int32 {
	i, _ := slices.BinarySearch(r.points, h)
	for {
		if i == len(r.points) {
			i = 0
		}
		if o := r.owners[i]; pick[o] >= 0 {
			return o
		}
		i++
	}
}

// ringCache holds the ring of the last address set seen and the view of
// the last cacheable list.
type ringCache struct {
	cur  atomic.Pointer[ring]
	view atomic.Pointer[listView]
	mu   sync.Mutex // one rebuild at a time
}

func (c *ringCache) get(fp fingerprint, invokers []spi.Invoker, w *warmup.Weigher, nodes int) *ring {
	if r := c.cur.Load(); r != nil && r.fp == fp {
		return r
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.cur.Load(); r != nil && r.fp == fp {
		return r
	}
	r := build(fp, invokers, w, nodes)
	c.cur.Store(r)
	return r
}

// build places nodes points per distinct address. Point i of address a is
// mix(fnv1a64(a + "#" + i)), a = "host:port" ("[::1]:20880" for IPv6):
// FNV-1a followed by the MurmurHash3 64-bit finalizer, which spreads the
// similar strings evenly. (Dubbo uses MD5(a + i) and four 32-bit points
// per digest; any well-mixed 64-bit hash gives the same guarantees.)
func build(fp fingerprint, invokers []spi.Invoker, w *warmup.Weigher, nodes int) *ring {
	var hosts []spi.HostPort
	for _, x := range invokers {
		u := x.URL()
		hp := spi.HostPort{Host: u.Host(), Port: u.Port()}
		if w.Configured(u) > 0 && !slices.Contains(hosts, hp) {
			hosts = append(hosts, hp)
		}
	}
	slices.SortFunc(hosts, func(a, b spi.HostPort) int {
		if a.Host != b.Host {
			if a.Host < b.Host {
				return -1
			}
			return 1
		}
		return a.Port - b.Port
	})
	type point struct {
		h     uint64
		owner int32
	}
	pts := make([]point, 0, len(hosts)*nodes)
	for i, hp := range hosts {
		a := hp.String()
		for j := range nodes {
			pts = append(pts, point{mix(fnvString(fnvOffset, a+"#"+strconv.Itoa(j))), int32(i)})
		}
	}
	// Sort by hash, then by owner so that a (vanishingly rare) collision
	// resolves the same way whatever the list order.
	slices.SortFunc(pts, func(a, b point) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return int(a.owner - b.owner)
	})
	r := &ring{fp: fp, hosts: hosts, points: make([]uint64, len(pts)), owners: make([]int32, len(pts)),
		index: make(map[spi.HostPort]int32, len(hosts))}
	for i, hp := range hosts {
		r.index[hp] = int32(i)
	}
	for i, p := range pts {
		r.points[i], r.owners[i] = p.h, p.owner
	}
	return r
}

const (
	fnvOffset uint64 = 14695981039346656037
	fnvPrime  uint64 = 1099511628211
)

func fnvString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func fnvBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// mix is the MurmurHash3 fmix64 finalizer.
func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// hashArgs hashes the arguments at idx (missing ones are skipped), each in
// its text form (strings as is, numbers in decimal, like Dubbo's
// toString) followed by a 0x1f separator. Strings, []byte, bools and
// numbers are hashed without allocating.
func hashArgs(args []any, idx []int) uint64 {
	h := fnvOffset
	var buf [32]byte
	for _, i := range idx {
		if i >= len(args) {
			continue
		}
		switch v := args[i].(type) {
		case string:
			h = fnvString(h, v)
		case []byte:
			h = fnvBytes(h, v)
		case int:
			h = fnvBytes(h, strconv.AppendInt(buf[:0], int64(v), 10))
		case int8:
			h = fnvBytes(h, strconv.AppendInt(buf[:0], int64(v), 10))
		case int16:
			h = fnvBytes(h, strconv.AppendInt(buf[:0], int64(v), 10))
		case int32:
			h = fnvBytes(h, strconv.AppendInt(buf[:0], int64(v), 10))
		case int64:
			h = fnvBytes(h, strconv.AppendInt(buf[:0], v, 10))
		case uint:
			h = fnvBytes(h, strconv.AppendUint(buf[:0], uint64(v), 10))
		case uint8:
			h = fnvBytes(h, strconv.AppendUint(buf[:0], uint64(v), 10))
		case uint16:
			h = fnvBytes(h, strconv.AppendUint(buf[:0], uint64(v), 10))
		case uint32:
			h = fnvBytes(h, strconv.AppendUint(buf[:0], uint64(v), 10))
		case uint64:
			h = fnvBytes(h, strconv.AppendUint(buf[:0], v, 10))
		case float64:
			h = fnvBytes(h, strconv.AppendFloat(buf[:0], v, 'g', -1, 64))
		case float32:
			h = fnvBytes(h, strconv.AppendFloat(buf[:0], float64(v), 'g', -1, 32))
		case bool:
			h = fnvString(h, strconv.FormatBool(v))
		case nil:
			h = fnvString(h, "<nil>")
		case fmt.Stringer:
			h = fnvString(h, v.String())
		default:
			h = fnvBytes(h, fmt.Append(nil, v))
		}
		h = (h ^ 0x1f) * fnvPrime
	}
	return mix(h)
}

// Interface guards.
// UseLogger makes the balancer's warnings (hash.arguments naming no
// argument of a call, malformed weight or warm-up values, a provider's
// clock ahead) go to l, its node's logger
// (spi.LoggerUser: the kernel calls it right after Build).
func (b *Balancer) UseLogger(l *slog.Logger) { b.w.UseLogger(l) }

var (
	_ spi.LoadBalanceBuilder  = Builder{}
	_ spi.LoadBalance         = (*Balancer)(nil)
	_ spi.AffinityLoadBalance = (*Balancer)(nil)
	_ spi.LoggerUser          = (*Balancer)(nil)
)
