package config

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/airnode/airnode/spi"
)

// KeyKind is the type of a URL key's value.
type KeyKind int

// Value kinds of URL keys.
const (
	KindDuration KeyKind = iota // Go syntax or bare milliseconds (spi.ParseDuration)
	KindInt                     // base-10 integer ≥ Min
	KindSize                    // byte size (spi.ParseSize)
	KindIntList                 // comma list of integers ≥ Min
	KindBool                    // strconv.ParseBool: true, false, 1, 0, ...
)

// KeySpec describes one URL key the kernel reads.
type KeySpec struct {
	Key     string
	Kind    KeyKind
	Min     int64 // lower bound of KindInt / KindIntList; KindDuration and KindSize must be ≥ Min (ns / bytes) too
	Default string
	Meaning string
}

// MinTimeout is the shortest call timeout ("timeout") allowed: Dubbo's
// unit, the millisecond; a shorter one could only ever time out.
const MinTimeout = time.Millisecond

// KernelKeys are the kernel's URL keys whose values have a type. Each
// may also be written per method ("methods.Echo.timeout", or Dubbo's
// "Echo.timeout" when Echo is in "methods"). Keys naming an extension
// (transport, loadbalance, heartbeat, ...) are checked by the catalogs
// instead.
var KernelKeys = []KeySpec{
	{"timeout", KindDuration, int64(MinTimeout), "1s", "consumer call timeout"},
	{"connect.timeout", KindDuration, 1, "3s", "dial and first-ping timeout"},
	{"reconnect.backoff", KindDuration, 1, "100ms", "first reconnect delay, doubling, capped at 30s"},
	{"retries", KindInt, 0, "2", "extra tries for failover"},
	{"weight", KindInt, 0, "100", "provider weight"},
	{"warmup", KindDuration, 0, "10m", "provider warm-up period"},
	{"timestamp", KindInt, 0, "set at export", "provider start time, ms since epoch"},
	{"payload", KindSize, 1, "8MiB", "max frame body"},
	{"heartbeat.interval", KindDuration, int64(10 * time.Millisecond), "60s", "idle period before a ping / ping period"},
	{"heartbeat.timeout", KindDuration, 1, "3 × interval", "silence before reconnect/close"},
	{"heartbeat.retries", KindInt, 1, "3", "idle: failed pings before the client reconnects"}, // at most keyMax
	{"heartbeat.ping.timeout", KindDuration, 1, "the interval", "idle: how long a ping may wait"},
	{"heartbeat.ping.on.timeout", KindBool, 0, "true", "ping when a call times out with nothing read; no answer closes the connection"},
	{"hash.arguments", KindIntList, 0, "0", "consistenthash: argument indexes hashed"},
	{"hash.nodes", KindInt, 1, "160", "consistenthash: virtual nodes per provider"},
	{"executes", KindInt, 0, "unlimited", "provider concurrency limit per method"},
	{"actives", KindInt, 0, "unlimited", "consumer concurrency limit per method"},
	{"outlier.consecutive", KindInt, 0, "5", "consumer: failures in a row that eject a provider, 0: off"},
	{"outlier.ejection", KindDuration, 1, "5s", "consumer: first ejection of a failing provider, doubling, capped at 5m"},
	{"outlier.max.percent", KindInt, 0, "50", "consumer: most of a reference's providers ejected at once, %"},
}

// keyMax is the upper bound of the keys that have one, checked as the
// extensions that read them do (the kernel imports none: the bounds are
// theirs, repeated), so that serve, call and plugins.yaml say the same,
// whatever the bad value: "a duration from 10ms to 24h", and for an
// integer spi.IntRangeWant's text, "an integer from 0 (no limit) to
// 1048576", which the extension's spi.URL.MethodIntIn gives too.
var keyMax = map[string]struct {
	max  int64
	want string
}{
	"heartbeat.interval":  {int64(24 * time.Hour), "a duration from 10ms to 24h"},
	"heartbeat.retries":   {1000, spi.IntRangeWant(1, 1000, "")},             // heartbeat/idle MaxRetries
	"hash.nodes":          {65536, spi.IntRangeWant(1, 65536, "")},           // consistenthash MaxNodes
	"retries":             {100, spi.IntRangeWant(0, 100, "")},               // failover MaxRetries
	"executes":            {1 << 20, spi.IntRangeWant(0, 1<<20, "no limit")}, // executelimit MaxExecutes
	"actives":             {1 << 20, spi.IntRangeWant(0, 1<<20, "no limit")}, // activelimit MaxActives
	"outlier.max.percent": {100, spi.IntRangeWant(0, 100, "")},               // kernel/outlier.go
}

// CheckURL checks the value of every kernel key in u, at service and
// method level. It returns every malformed or out-of-bounds value as a
// *spi.ParamError naming the key as written and the value
// (`invalid value "abc" for URL key "timeout": want a duration ...`).
func CheckURL(u spi.URL) error { return CheckParams(u.Params()) }

// CheckParams is CheckURL for a parameter map. Empty keys are errors too.
func CheckParams(params map[string]string) error { return checkParams(params, false) }

// checkParams checks params; with fileSyntax a duration must carry a unit
// ("60s"): in plugins.yaml a bare number is rejected rather than read as
// milliseconds (scenario C2), while URLs keep Dubbo's "timeout=3000".
func checkParams(params map[string]string, fileSyntax bool) error {
	var methods []string
	if m := params[spi.KeyMethods]; m != "" {
		methods = strings.Split(m, ",")
	}
	keys := make([]string, 0, len(params))
	for k := range params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var errs []error
	for _, k := range keys {
		if k == "" {
			errs = append(errs, errors.New("empty parameter key"))
			continue
		}
		spec, ok := kernelKey(k, methods)
		if !ok {
			continue
		}
		if err := spec.check(k, params[k], fileSyntax); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// kernelKey finds the spec of k, written plainly or in a method-level
// form the kernel applies (spi.MethodLevelKey, the rule of
// spi.URL.MethodParam and MethodsSetting): "methods.<m>.<key>", or Dubbo's
// "<m>.<key>" for m in methods or, when methods is empty (serve's -p
// before Export adds "methods", a reference URL), for m an exported Go
// method name. So "Echo.weight=-1" is checked as "methods.Echo.weight=-1"
// is, and "heartbeat.retries" stays the kernel key it is.
func kernelKey(k string, methods []string) (KeySpec, bool) {
	find := func(k string) (KeySpec, bool) {
		i := slices.IndexFunc(KernelKeys, func(s KeySpec) bool { return s.Key == k })
		if i < 0 {
			return KeySpec{}, false
		}
		return KernelKeys[i], true
	}
	if s, ok := find(k); ok {
		return s, true
	}
	if _, key, ok := spi.MethodLevelKey(k, methods); ok {
		return find(key)
	}
	return KeySpec{}, false
}

func (s KeySpec) check(key, v string, fileSyntax bool) error {
	bound := func(want string) error { return &spi.ParamError{Key: key, Value: v, Want: want} }
	switch s.Kind {
	case KindDuration:
		if fileSyntax {
			if _, err := time.ParseDuration(strings.TrimSpace(v)); err != nil {
				if _, perr := spi.ParseDuration(v); !errors.Is(perr, spi.ErrDurationTooLarge) && !errors.Is(perr, spi.ErrDurationNegative) && !errors.Is(perr, spi.ErrDurationUnitCase) {
					// no file name here: Load's prefix names the file it read
					return bound("a duration with a unit, such as 60s, 1.5s or 200ms (a configuration file takes no bare number of milliseconds)")
				}
			}
		}
		d, err := spi.ParseDuration(v)
		if err != nil {
			if s.Min == 0 && errors.Is(err, spi.ErrDurationNegative) {
				// 0 is allowed (warmup=0: none): not "a positive duration"
				return bound("a duration ≥ 0 (0: none), not a negative one")
			}
			if fileSyntax { // no bare milliseconds to suggest: plugins.yaml refuses them
				return bound(spi.DurationWantWithUnit(err))
			}
			return bound(spi.DurationWant(err))
		}
		if m, ok := keyMax[s.Key]; ok && (int64(d) < s.Min || int64(d) > m.max) {
			return bound(m.want)
		}
		if int64(d) < s.Min {
			if s.Min > 1 {
				return bound("a duration of at least " + time.Duration(s.Min).String())
			}
			return bound("a duration > 0")
		}
	case KindInt:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if m, ok := keyMax[s.Key]; ok && (err != nil || n < s.Min || n > m.max) {
			return bound(m.want)
		}
		if err != nil || n < s.Min {
			return bound("an integer ≥ " + strconv.FormatInt(s.Min, 10))
		}
	case KindSize:
		n, err := spi.ParseSize(v)
		if err != nil || n < s.Min {
			return bound("a byte size ≥ 1 such as 65536, 64KiB or 8MiB")
		}
	case KindBool:
		if _, err := strconv.ParseBool(strings.TrimSpace(v)); err != nil {
			return bound("true or false")
		}
	case KindIntList:
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil || n < s.Min {
				return bound("a comma list of integers ≥ " + strconv.FormatInt(s.Min, 10))
			}
		}
	}
	return nil
}
