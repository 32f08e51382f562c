package warmup

import (
	"log/slog"
	"math"
	"math/bits"
	"strconv"
	"sync"
	"time"

	"github.com/airnode/airnode/spi"
)

// URL keys and defaults. All three are owned by the provider.
const (
	KeyWeight    = "weight"
	KeyWarmup    = "warmup"
	KeyTimestamp = "timestamp"

	// DefaultWeight is the weight of a provider URL without "weight".
	DefaultWeight int64 = 100
	// MaxWeight bounds weights so that sums over any provider list fit in
	// an int64; a larger configured weight is clamped to it.
	MaxWeight int64 = math.MaxInt32
	// DefaultWarmup is the warm-up period of a provider URL without
	// "warmup".
	DefaultWarmup = 10 * time.Minute
	// SkewLogInterval is the least time between two clock-skew warnings
	// about the same provider.
	SkewLogInterval = time.Minute
)

// Effective is the warm-up formula on 64-bit milliseconds. For weight <= 0
// it is 0 (never picked). Otherwise, with warmup <= 0 (disabled) or
// uptime >= warmup it is weight; with uptime < 0 (provider clock ahead) it
// is 1; else max(1, min(weight, floor(uptime*weight/warmup))), computed
// exactly in 128 bits so that no product overflows.
//
// Dubbo 2.7.x (AbstractLoadBalance.calculateWarmupWeight) computes
// uptime/(warmup/weight) in floating point after narrowing uptime to a
// 32-bit int, which wraps after 2^31 ms (24.8 days) and makes a long-running
// provider look cold again; this formula has neither problem.
func Effective(weight, warmup, uptime int64) int64 {
	switch {
	case weight <= 0:
		return 0
	case warmup <= 0 || uptime >= warmup:
		return weight
	case uptime < 0:
		return 1
	}
	// 0 <= uptime < warmup, so hi < warmup and Div64 cannot overflow; the
	// quotient is below weight.
	hi, lo := bits.Mul64(uint64(uptime), uint64(weight))
	q, _ := bits.Div64(hi, lo, uint64(warmup))
	return max(1, int64(q))
}

// Left is the warm-up a provider has left, in ms, at the same inputs as
// Effective: 0 when Effective is its full weight or 0 (weight <= 0,
// warmup <= 0, uptime >= warmup), else warmup - uptime, which is above
// warmup while the provider's clock is ahead (uptime < 0: its warm-up
// starts when its timestamp passes).
func Left(weight, warmup, uptime int64) int64 {
	if weight <= 0 || warmup <= 0 || uptime >= warmup {
		return 0
	}
	return warmup - uptime
}

// Option configures a Weigher; options inject behaviour only (clock,
// logger), never configuration, which comes from URLs.
type Option func(*Weigher)

// WithClock makes the Weigher read the time from now instead of time.Now
// (tests).
func WithClock(now func() time.Time) Option { return func(w *Weigher) { w.now = now } }

// WithLogger makes the Weigher log to l instead of slog.Default(), and
// keep it when UseLogger offers another.
func WithLogger(l *slog.Logger) Option {
	return func(w *Weigher) { w.base, w.log, w.own = l, withComponent(l), true }
}

// withComponent is l for the balancers' records: component=loadbalance.
func withComponent(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return l.With("component", "loadbalance")
}

// Weigher computes effective weights from invoker URLs. Malformed values
// are logged once per provider and key (export-time validation rejects them
// at the provider, so they only come from foreign or hand-written registry
// entries) and the key's default is used. A provider whose clock is ahead is
// logged at most once per SkewLogInterval.
type Weigher struct {
	now  func() time.Time
	base *slog.Logger // the logger given (nil: slog.Default()): skew warnings are deduplicated per base
	log  *slog.Logger // base with component=loadbalance
	own  bool         // log came from WithLogger: UseLogger leaves it

	mu      sync.Mutex
	badSeen map[string]bool // "address key=value" already logged
}

// New returns a Weigher using time.Now and slog.Default() unless options
// say otherwise.
func New(opts ...Option) *Weigher {
	w := &Weigher{now: time.Now}
	for _, o := range opts {
		o(w)
	}
	return w
}

// Now returns the current time of the Weigher's clock in milliseconds since
// the epoch; balancers read it once per Select and pass it to Weight.
func (w *Weigher) Now() int64 { return w.now().UnixMilli() }

// UseLogger makes w log to l, its node's logger (a balancer's
// spi.LoggerUser passes it on), unless WithLogger gave it one. Call it
// before w is used, never concurrently with its other methods.
func (w *Weigher) UseLogger(l *slog.Logger) {
	if !w.own {
		w.base, w.log = l, withComponent(l)
	}
}

// Logger returns the logger given by WithLogger or UseLogger, else
// slog.Default(): the balancer using w logs its own warnings there too.
func (w *Weigher) Logger() *slog.Logger { return w.logger() }

func (w *Weigher) logger() *slog.Logger {
	if w.log != nil {
		return w.log
	}
	return withComponent(slog.Default()) // a warning's, not a call's: once per provider and key
}

// Configured returns the configured weight of u clamped to
// [0, MaxWeight], without warm-up: DefaultWeight when absent or malformed.
func (w *Weigher) Configured(u spi.URL) int64 {
	v, ok := u.Param(KeyWeight)
	if !ok {
		return DefaultWeight
	}
	n, ok := parseDigits(v)
	if !ok {
		w.bad(u, KeyWeight, v, "a non-negative integer", "the default weight "+strconv.FormatInt(DefaultWeight, 10))
		return DefaultWeight
	}
	return min(n, MaxWeight)
}

// Weight returns the effective weight of the provider u at now (ms since
// the epoch, from Now): Effective of its configured weight, warm-up period
// and uptime = now - timestamp. A missing timestamp means warm. It never
// allocates unless it has something to log.
func (w *Weigher) Weight(u spi.URL, now int64) int64 {
	return w.effective(w.parse(u), now, u, nil)
}

// WeightOf is Weight of x's URL, counting the warm-up from x's
// spi.ProviderStart when x says one later than the URL's timestamp: the
// start of the process x's connection reached, a restarted one whose
// registry entry the consumer does not have yet (the registry
// unreachable). A URL without timestamp stays warm.
func (w *Weigher) WeightOf(x spi.Invoker, now int64) int64 {
	return w.effective(w.keysOf(x), now, spi.URL{}, x)
}

// keysOf parses x's URL's keys, with the later start of
// spi.ProviderStart (WeightOf).
func (w *Weigher) keysOf(x spi.Invoker) keys {
	k := w.parse(x.URL())
	if p, ok := x.(spi.ProviderStart); ok && k.started > 0 {
		k.started = max(k.started, p.ProviderStarted())
	}
	return k
}

// Progress returns what a balancer using w picks the provider x with at
// now (ms since the epoch, from Now): its configured weight (Configured),
// its effective weight (as Weight: warm-up applied, 0 for weight 0) and
// its warm-up left in ms (Left: 0 once warm, with warm-up off, weight 0
// or no timestamp), counting the warm-up from the later of its URL's
// timestamp and its spi.ProviderStart, as WeightOf does. It reads x's
// URL and start only; it does not invoke x.
func (w *Weigher) Progress(x spi.Invoker, now int64) (configured, effective, leftMs int64) {
	k := w.keysOf(x)
	effective = w.effective(k, now, spi.URL{}, x)
	if k.started != 0 {
		leftMs = Left(k.weight, k.warmup, now-k.started)
	}
	return k.weight, effective, leftMs
}

// keys are the parsed weight keys of one provider URL.
type keys struct {
	weight  int64 // clamped to [0, MaxWeight]
	warmup  int64 // ms
	started int64 // ms since the epoch; 0 = warm (absent or malformed)
}

func (w *Weigher) parse(u spi.URL) keys {
	k := keys{weight: w.Configured(u), warmup: DefaultWarmup.Milliseconds()}
	if k.weight == 0 {
		return k
	}
	if v, ok := u.Param(KeyWarmup); ok {
		var good bool
		if k.warmup, good = parseMillis(v); !good {
			w.bad(u, KeyWarmup, v, "a duration such as 10m or 600000 (milliseconds)", "the default warmup "+DefaultWarmup.String())
			k.warmup = DefaultWarmup.Milliseconds()
		}
	}
	if ts, ok := u.Param(KeyTimestamp); ok {
		started, good := parseDigits(ts)
		if !good || started == 0 {
			w.bad(u, KeyTimestamp, ts, "milliseconds since the epoch", "full weight, no warm-up")
			started = 0
		}
		k.started = started
	}
	return k
}

// effective applies the warm-up formula to k at now; u (or, when u is the
// zero URL, x's URL) names the provider in a skew warning.
func (w *Weigher) effective(k keys, now int64, u spi.URL, x spi.Invoker) int64 {
	if k.weight == 0 || k.started == 0 {
		return k.weight
	}
	uptime := now - k.started // both are non-negative: no overflow
	if uptime < 0 && k.warmup > 0 {
		if x != nil {
			u = x.URL()
		}
		w.skew(u, -uptime)
	}
	return Effective(k.weight, k.warmup, uptime)
}

// skewLog holds, per logger and provider, when a skew warning was last
// written: process-wide, since a consumer builds one Weigher per
// balancer it builds, and two balancers of one reference (a call's first
// pick racing the directory's first fill) logged one skew twice within
// 45 ms (tester65 #7; scenario W3 wants one line).
var skewLog struct {
	sync.Mutex
	at map[skewKey]time.Time
}

// skewKey is a skew warning's logger and provider.
type skewKey struct {
	l  *slog.Logger
	hp spi.HostPort
}

// skew logs, at most once per SkewLogInterval per provider and logger
// (skewLog), that the provider's clock is ahead.
func (w *Weigher) skew(u spi.URL, aheadMs int64) {
	base := w.base
	if base == nil {
		base = slog.Default()
	}
	k := skewKey{base, spi.HostPort{Host: u.Host(), Port: u.Port()}}
	now := w.now()
	skewLog.Lock()
	last, seen := skewLog.at[k]
	if seen && now.Sub(last) < SkewLogInterval && !now.Before(last) {
		skewLog.Unlock()
		return
	}
	if skewLog.at == nil {
		skewLog.at = make(map[skewKey]time.Time)
	}
	skewLog.at[k] = now
	skewLog.Unlock()
	w.logger().Warn("provider timestamp is in the future (clock skew); using weight 1 until it is reached",
		"provider", u.Address(), "skew", time.Duration(aheadMs)*time.Millisecond)
}

// bad logs a malformed provider value once per provider, key and value,
// at Warn, saying what the provider is picked with instead (uses: "the
// default weight 100"): the entry stays in the list, as one without the
// key would (tester74 #9: the line did not say which weight was used).
func (w *Weigher) bad(u spi.URL, key, value, want, uses string) {
	addr := u.Address()
	id := addr + " " + key + "=" + value
	w.mu.Lock()
	seen := w.badSeen[id]
	if !seen {
		if w.badSeen == nil {
			w.badSeen = make(map[string]bool)
		}
		w.badSeen[id] = true
	}
	w.mu.Unlock()
	if !seen {
		w.logger().Warn("provider entry "+addr+" has a malformed "+key+" "+strconv.Quote(value)+"; it is picked with "+uses+" (as if it had no "+key+")",
			"provider", addr, "key", key, "value", value, "want", want, "uses", uses)
	}
}

// parseDigits parses a non-empty string of ASCII digits without allocating;
// values above math.MaxInt64 are reported as malformed.
func parseDigits(s string) (int64, bool) {
	if s == "" || len(s) > 19 {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// parseMillis parses a warm-up period: bare digits are milliseconds
// (Dubbo's form), anything else Go duration syntax; negative is malformed.
func parseMillis(s string) (int64, bool) {
	if n, ok := parseDigits(s); ok {
		return n, true
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return d.Milliseconds(), true
}
