package extension

import (
	"errors"
	"fmt"
	"github.com/airnode/airnode/internal/suggest"
	"sort"
	"strings"
	"sync"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// Named is what every extension of every point has.
type Named interface{ Name() string }

// Origin says where an extension comes from: "bundled", or the path of the
// plugin binary that serves it.
type Origin string

// Bundled is the origin of extensions compiled into airnode.
const Bundled Origin = "bundled"

type entry[T Named] struct {
	ext    T
	origin Origin
}

// Point is the catalog of one extension point: a name (also the URL key
// that selects it unless Key differs), a default extension name, and the
// registered extensions. Safe for concurrent use.
type Point[T Named] struct {
	name string // "loadbalance"
	key  string // URL key that selects an extension; "" for registry (by scheme)
	def  string // default extension name
	opts options

	mu       sync.RWMutex
	exts     map[string]entry[T]
	wrappers []func(T) T
	missHint string // SetMissHint
}

// SetMissHint sets the hint an *UnknownError of this point carries
// (UnknownError.Hint), when it suggests no close name: what the caller
// knows about why a name may be missing (airnode's commands: no
// configuration file was read, so no plugin is declared). "" removes it.
// Safe for concurrent use.
func (p *Point[T]) SetMissHint(hint string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.missHint = hint
}

// MissHint returns the hint set by SetMissHint, "" when none is.
func (p *Point[T]) MissHint() string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.missHint
}

// NewPoint returns an empty catalog for a point named name, selected by URL
// key key, whose default extension is def. An empty key means the point is
// selected by the URL's scheme (the registry point).
func NewPoint[T Named](name, key, def string, opts ...Option) *Point[T] {
	p := &Point[T]{name: name, key: key, def: def, exts: map[string]entry[T]{}}
	for _, o := range opts {
		o(&p.opts)
	}
	return p
}

// Option adjusts how a Point selects.
type Option func(*options)

type options struct {
	numberKey string // see BareNumberSelectsDefault
	off       string // see NumberOffIs
}

// NumberOffIs names the extension of a point built with
// BareNumberSelectsDefault that turns the point's function off ("none"
// for heartbeat): Dubbo reads heartbeat=0 or a negative number as off,
// and here 0 is an interval out of bounds and a negative number an
// unknown name, so both errors add a hint naming key=off (offHint).
func NumberOffIs(name string) Option {
	return func(o *options) { o.off = name }
}

// offHint returns, for v, a value of the point's key that Dubbo reads as
// off (0, or a negative integer), the hint its error adds: "in Dubbo 0 (or
// a negative number) turns the heartbeat off: here use heartbeat=none (a
// bare number is heartbeat.interval in ms of the default heartbeat,
// idle)". "" for any other value, for a point without NumberOffIs, and
// when the off extension is not registered.
func (p *Point[T]) offHint(v string) string {
	if p.opts.off == "" || p.opts.numberKey == "" {
		return ""
	}
	if _, ok := p.Origin(p.opts.off); !ok {
		return "" // no such extension to name
	}
	what := "0 (or a negative number)"
	if digits, neg := strings.CutPrefix(v, "-"); neg && bareNumber(digits) {
		what = "a negative number (or 0)"
	} else if !bareNumber(v) || strings.Trim(v, "0") != "" {
		return ""
	}
	return fmt.Sprintf("in Dubbo %s turns the %s off: here use %s=%s (a bare number is %s in ms of the default %s, %s)",
		what, p.name, p.key, p.opts.off, p.opts.numberKey, p.name, p.def)
}

// BareNumberSelectsDefault makes a bare non-negative integer in the point's
// key select the default extension, the number being the value of
// intervalKey in milliseconds. This is Dubbo's "heartbeat=60000": the
// default heartbeat strategy with a 60 s interval. Normalize
// rewrites such a URL into the explicit form.
func BareNumberSelectsDefault(intervalKey string) Option {
	return func(o *options) { o.numberKey = intervalKey }
}

// bareNumber reports whether v is a non-empty string of ASCII digits.
func bareNumber(v string) bool {
	if v == "" {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Normalize returns u in the explicit form this point's extensions read.
// For a point built with BareNumberSelectsDefault, "heartbeat=5000" becomes
// "heartbeat=<default>&heartbeat.interval=5000"; any other URL is returned
// unchanged. The bare number and the interval key set one setting: given
// both with the same duration the URL normalizes the same way, with
// different ones (or one that does not parse) u is returned unchanged, for
// the extension's Build to refuse (one setting given twice with different
// values, as a key given twice is refused).
func (p *Point[T]) Normalize(u spi.URL) spi.URL {
	if p.opts.numberKey == "" || p.key == "" {
		return u
	}
	v, ok := u.Param(p.key)
	if !ok || !bareNumber(v) {
		return u
	}
	if iv, ok := u.Param(p.opts.numberKey); ok {
		a, errA := spi.ParseDuration(v)
		b, errB := spi.ParseDuration(iv)
		if errA != nil || errB != nil || a != b {
			return u
		}
	}
	return u.With(p.key, p.def).With(p.opts.numberKey, v)
}

// BareNumberError returns err with the interval key it names renamed to
// the point's key when u gave the interval as a bare number only
// ("heartbeat=0" is refused naming "heartbeat", the key the user wrote,
// not the "heartbeat.interval" Normalize made of it). err is Build's error
// for Normalize(u); any other error is returned as is.
func (p *Point[T]) BareNumberError(u spi.URL, err error) error {
	if err == nil || p.opts.numberKey == "" {
		return err
	}
	v, ok := u.Param(p.key)
	if _, given := u.Param(p.opts.numberKey); !ok || given || !bareNumber(v) {
		return err
	}
	var pe *spi.ParamError
	if !errors.As(err, &pe) || pe.Key != p.opts.numberKey || pe.Value != v {
		return err
	}
	was := pe.Error()
	pe.Key = p.key
	// the wrapping messages were formatted with the old key
	msg := strings.Replace(err.Error(), was, pe.Error(), 1)
	if hint := p.offHint(v); hint != "" {
		msg += "; " + hint // heartbeat=0: Dubbo's "off"
	}
	return &renamedError{msg: msg, err: err}
}

// renamedError is an error whose message was rewritten (BareNumberError);
// it unwraps to the original.
type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }

// Name returns the point's name ("loadbalance").
func (p *Point[T]) Name() string { return p.name }

// Key returns the URL key that selects an extension of this point.
func (p *Point[T]) Key() string { return p.key }

// Default returns the default extension name.
func (p *Point[T]) Default() string { return p.def }

// ValidName reports whether name is a valid extension name: lowercase
// letters and digits, then also '.', '-', '_'; at most 64 characters.
func ValidName(name string) error {
	if name == "" {
		return fmt.Errorf("empty extension name")
	}
	if len(name) > 64 {
		return fmt.Errorf("extension name %q longer than 64 characters", name)
	}
	for i, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
			i > 0 && (c == '.' || c == '-' || c == '_')
		if !ok {
			return fmt.Errorf("invalid extension name %q (allowed: lowercase letters and digits, then '.', '-', '_')", name)
		}
	}
	return nil
}

// Register adds ext under ext.Name(). It fails, naming the point, for:
//
//   - an invalid name (ValidName);
//   - a name the point's selection gives another meaning (reservedName):
//     "default" for a filter, a bare number where it selects the default
//     (heartbeat), a name that cannot be a URL scheme for the point chosen
//     by scheme (registry);
//   - a name already registered on this point, whatever its origin;
//   - for a codec, a wire id outside 1-31 (protocol.CodecMask; 0 is
//     reserved for event frames) or one another codec holds, naming it:
//     `codec: id 1 of "evil" is already msgpack's (bundled); ids are 1-31,
//     unique`. So Catalogs.CodecByID is never ambiguous. Dubbo's
//     CodecSupport likewise refuses a serialization whose content-type id
//     another one has.
//   - a KeyDoc declaring Secret a key whose mark would hide a key the
//     kernel reads (timeout, weight, retries, a point's selecting key...;
//     "token" is secret already): `filter: "evil" declares the kernel's
//     URL key "timeout" secret: ...`;
//   - a KeyDoc declaring Secret a key whose mark would hide a key another
//     extension declares without Secret, registered earlier in any
//     catalogs of the process: `filter: "evil" declares "accesslog"
//     secret, a key of filter "accesslog" (bundled): ...; declare a key of
//     its own (such as "evil.accesslog") secret instead`; and the
//     converse: a key declared without Secret that an earlier extension's
//     mark hides (`filter: "accesslog" declares "accesslog", which filter
//     "evil" (/opt/evil) declared secret: ...`). Of the two, the later is
//     refused. A mark hides a key k when it is k, when k ends in "."+mark
//     ("choices" would hide "wlr.choices"), or when it is a method-level
//     form "M.k" of k other than "<ext's name>.k". Keys shared on purpose
//     stay allowed: declared without Secret by all, or Secret by all. See
//     keyowners.go for the rule and why it is process-wide.
//
// Nothing is registered or marked when Register fails. Otherwise, when
// ext is an spi.KeyDescriber declaring a key Secret, Register marks that
// key secret process-wide (spi.MarkSecretKey), so that spi.URL.Redacted
// and everything that prints URLs hide its value from then on; a
// filter's activation key (spi.Activation.Key) counts as a key it
// declares, without Secret unless its Keys say Secret.
func (p *Point[T]) Register(ext T, origin Origin) error {
	name := ext.Name()
	if err := ValidName(name); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	if err := p.reservedName(name); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if prev, dup := p.exts[name]; dup {
		return fmt.Errorf("%s: extension %q already registered (%s)", p.name, name, prev.origin)
	}
	if err := p.checkCodecID(ext); err != nil {
		return err
	}
	if err := claimKeys(p.name, name, origin, ext); err != nil {
		return err
	}
	p.exts[name] = entry[T]{ext: ext, origin: origin}
	return nil
}

// reservedName refuses a name that this point's selection would read as
// something else, so that an extension registered under it could never
// be selected:
//
//   - the filter point: "default", the filter list's token for the
//     activated set (FilterDefault; Dubbo reserves it too); "-name" is
//     already refused by ValidName;
//   - a point built with BareNumberSelectsDefault (heartbeat): a name of
//     digits only, which selects the default strategy with that interval;
//   - the point chosen by the URL scheme (registry, empty key): a name
//     that is not a valid scheme (a leading digit, or '_').
func (p *Point[T]) reservedName(name string) error {
	if _, ok := any(p).(*Point[spi.FilterBuilder]); ok && name == FilterDefault {
		return fmt.Errorf("extension name %q is reserved: in the %q list it stands for the activated filters; choose another name", name, p.key)
	}
	if p.opts.numberKey != "" && bareNumber(name) {
		return fmt.Errorf("extension name %q is reserved: a bare number in %q selects the default %s with %s in ms; choose a name with a letter", name, p.key, p.name, p.opts.numberKey)
	}
	if p.key == "" && (name[0] >= '0' && name[0] <= '9' || strings.Contains(name, "_")) {
		return fmt.Errorf("extension name %q cannot be selected: it is chosen by URL scheme, and a scheme starts with a letter and has no '_'", name)
	}
	return nil
}

// checkCodecID refuses, on the codec point, a codec whose wire id is
// outside 1-31 or held by another registered codec. p.mu is held.
func (p *Point[T]) checkCodecID(ext T) error {
	if _, ok := any(p).(*Point[spi.Codec]); !ok {
		return nil
	}
	c := any(ext).(spi.Codec)
	id := c.ID()
	if id == 0 || id > protocol.CodecMask {
		return fmt.Errorf("%s: id %d of %q is outside 1-%d (0 is reserved for event frames; the wire keeps 5 bits); ids are 1-%d, unique",
			p.name, id, c.Name(), protocol.CodecMask, protocol.CodecMask)
	}
	for n, e := range p.exts {
		if any(e.ext).(spi.Codec).ID() == id {
			return fmt.Errorf("%s: id %d of %q is already %s's (%s); ids are 1-%d, unique",
				p.name, id, c.Name(), n, e.origin, protocol.CodecMask)
		}
	}
	return nil
}

// Wrap adds a wrapper applied, in the order added, to every extension this
// point returns (a decorator such as metrics around a balancer builder,
// Dubbo's wrapper classes).
//
// A wrapper replaces what it wraps, so what it builds has only the
// methods the wrapper gives it: the optional interfaces of the wrapped
// value are lost unless the wrapper forwards them. A wrapper around a
// load balancer builder must make its balancer an spi.AffinityLoadBalance
// when the inner one is (forward Affinity: consistenthash holds a fresh
// reference's calls until every provider is connected) and an
// spi.ContextLoadBalance when the inner one is (implement SelectContext
// through the inner SelectContext: a plugin balancer's pick is then
// bounded by the call's ctx); likewise spi.KeyDescriber on a builder,
// spi.TimeoutCheck on a heartbeat, spi.ReadOnlyRegistry and
// spi.RegistryReacher on a registry builder, spi.RegistryHealth on a
// registry. Check each with a type assertion on the inner value and
// return a type that has exactly the inner's set.
func (p *Point[T]) Wrap(w func(T) T) {
	p.mu.Lock()
	p.wrappers = append(p.wrappers, w)
	p.mu.Unlock()
}

// Names returns the registered names, sorted.
func (p *Point[T]) Names() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	names := make([]string, 0, len(p.exts))
	for n := range p.exts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Origin returns where name comes from, and whether it is registered.
func (p *Point[T]) Origin(name string) (Origin, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	e, ok := p.exts[name]
	return e.origin, ok
}

// Get returns the extension registered as name, wrapped by every wrapper.
// An unknown name is an *UnknownError listing the available names.
func (p *Point[T]) Get(name string) (T, error) {
	p.mu.RLock()
	e, ok := p.exts[name]
	wrappers := p.wrappers
	p.mu.RUnlock()
	if !ok {
		var zero T
		hint := p.MissHint()
		if off := p.offHint(name); off != "" {
			hint = off // heartbeat=-1: Dubbo's "off"
		}
		ue := &UnknownError{Point: p.name, Name: name, Available: p.Names(), Hint: hint}
		if name == "" {
			ue.Key = p.key // "loadbalance=": an empty value of the point's key
		}
		return zero, ue
	}
	ext := e.ext
	for _, w := range wrappers {
		ext = w(ext)
	}
	return ext, nil
}

// Selection says which extension a URL selects and why.
type Selection struct {
	Name   string // extension name
	Source string // URL key that chose it ("methods.Echo.loadbalance"), "scheme", or "default"
	// Note explains an unusual selection, e.g. "bare number: default
	// strategy with heartbeat.interval=5000 (ms)"; usually "".
	Note string
}

// SourceDefault and SourceScheme are the Selection.Source values that are
// not URL keys.
const (
	SourceDefault = "default"
	SourceScheme  = "scheme"
)

// Choose resolves the extension name for method ("" for service level) from
// u: the method-level key first, then the service-level key, then the
// default. An empty value ("loadbalance=") is not absent: it selects the
// name "", which no extension has, so that Select refuses it (an
// *UnknownError saying the key is empty and listing the names) rather
// than silently using the default. A point with no key (registry) is
// chosen by u's scheme. It does not check that the name is registered.
func (p *Point[T]) Choose(u spi.URL, method string) Selection {
	if p.key == "" {
		if s := u.Scheme(); s != "" {
			return Selection{Name: s, Source: SourceScheme}
		}
		return Selection{Name: p.def, Source: SourceDefault}
	}
	if v, src, ok := u.MethodParam(method, p.key); ok {
		if p.opts.numberKey != "" && bareNumber(v) {
			return Selection{Name: p.def, Source: src,
				Note: fmt.Sprintf("bare number: default %s with %s=%s (ms)", p.name, p.opts.numberKey, v)}
		}
		return Selection{Name: v, Source: src}
	}
	return Selection{Name: p.def, Source: SourceDefault}
}

// Select returns the extension u selects for method, and the selection.
func (p *Point[T]) Select(u spi.URL, method string) (T, Selection, error) {
	s := p.Choose(u, method)
	ext, err := p.Get(s.Name)
	return ext, s, emptyKeyAsWritten(err, s)
}

// emptyKeyAsWritten returns err, Get's error for the name s selected;
// when it is the *UnknownError of an empty value, its Key becomes the
// key as written that s came from ("methods.Echo.loadbalance").
func emptyKeyAsWritten(err error, s Selection) error {
	if ue, ok := err.(*UnknownError); ok && ue.Key != "" && s.Source != SourceDefault && s.Source != SourceScheme {
		ue.Key = s.Source
	}
	return err
}

// UnknownError is returned for an extension name that is not registered.
// Its message names the point, the name, every available name and the
// closest one within a small edit distance (Closest), else the one name
// that is it with a namespace ("p2c" suggests the plugin "acme.p2c",
// internal/suggest.Qualified), e.g.
//
//	unknown loadbalance "rundrobin" (available: consistenthash, leastactive, p2c, random, roundrobin, shortestresponse); did you mean "roundrobin"?
//
// Hint, when set, follows the list when no close name is suggested (the
// point's MissHint: `... (available: ...); no configuration file was
// read ...`).
type UnknownError struct {
	Point     string   // the extension point: "loadbalance"
	Name      string   // the name asked for, as given ("" included)
	Available []string // every registered name of the point, sorted; empty when none is
	Hint      string   // the point's MissHint, or its hint for a number meaning "off" (heartbeat=-1); "" for none
	// Key is the URL key, as written, whose empty value asked for Name
	// "" ("loadbalance", "methods.Echo.loadbalance"); "" when Name did
	// not come from an empty URL value.
	Key string
}

// Error renders the message described above: `unknown POINT "NAME"
// (available: ...)`, or `(none registered)`, then the did-you-mean or
// else the Hint. For an empty URL value (Key set, Name "") it is
// `KEY= is empty: want one of NAME, NAME, ...` (or `... none is
// registered`).
func (e *UnknownError) Error() string {
	if e.Key != "" && e.Name == "" {
		if len(e.Available) == 0 {
			return fmt.Sprintf("%s= is empty: want a %s name, and none is registered", e.Key, e.Point)
		}
		return fmt.Sprintf("%s= is empty: want one of %s", e.Key, strings.Join(e.Available, ", "))
	}
	var b strings.Builder
	if len(e.Available) == 0 {
		fmt.Fprintf(&b, "unknown %s %q (none registered)", e.Point, e.Name)
		if e.Hint != "" {
			fmt.Fprintf(&b, "; %s", e.Hint)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "unknown %s %q (available: %s)", e.Point, e.Name, strings.Join(e.Available, ", "))
	m := Closest(e.Name, e.Available)
	if m == "" && e.Name != "" {
		m = suggest.Qualified(e.Name, e.Available)
	}
	if m != "" {
		fmt.Fprintf(&b, "; did you mean %q?", m)
	} else if e.Hint != "" {
		fmt.Fprintf(&b, "; %s", e.Hint)
	}
	return b.String()
}

// Closest returns the candidate within a small edit distance of name, or
// "" when none is: the "did you mean" of unknown names. It is
// internal/suggest.Closest, the one rule of every airnode suggestion: at
// most a third of name's length in edits, 1 to 2, a swap of two adjacent
// bytes counting one ("tpc" gets "tcp", "nope" gets nothing).
func Closest(name string, candidates []string) string { return suggest.Closest(name, candidates) }

// EditDistance returns the edit distance of a and b that every airnode
// suggestion uses (internal/suggest.Distance: single-byte insertions,
// deletions, substitutions, and swaps of two adjacent bytes counting one).
func EditDistance(a, b string) int { return suggest.Distance(a, b) }
