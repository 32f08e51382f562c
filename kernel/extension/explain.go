package extension

import (
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/airnode/airnode/spi"
)

// PointInfo describes one extension point for listings (airnode list).
type PointInfo struct {
	Name       string          // "loadbalance"
	Key        string          // URL key that selects it; "" when chosen by scheme
	Default    string          // default extension, "" for filters
	Extensions []ExtensionInfo // every registered extension, sorted by name
}

// ExtensionInfo is one registered extension and where it comes from.
type ExtensionInfo struct {
	Name   string // the registered name: "roundrobin", "acme.p2c"
	Origin Origin // Bundled, or the plugin binary's path
	// Keys are the URL keys the extension declares it reads, in its own
	// order (spi.KeyDescriber on the registered builder or codec; a
	// plugin's are those its binary sent at start); nil when it declares
	// none: it reads no key of its own, or it does not say.
	Keys []spi.KeyDoc
}

// lister is what every Point[T] offers regardless of T.
type lister interface {
	Name() string
	Key() string
	Default() string
	Names() []string
	Origin(name string) (Origin, bool)
	keysOf(name string) []spi.KeyDoc
}

// keysOf returns the keys the extension registered as name declares
// (spi.KeyDescriber), asking the registered extension first and, when it
// does not say, the wrapped one Get returns; nil when neither does or name
// is not registered. The result is the caller's.
func (p *Point[T]) keysOf(name string) []spi.KeyDoc {
	p.mu.RLock()
	e, ok := p.exts[name]
	p.mu.RUnlock()
	if !ok {
		return nil
	}
	if d, ok := any(e.ext).(spi.KeyDescriber); ok {
		return slices.Clone(d.Keys())
	}
	if x, err := p.Get(name); err == nil {
		if d, ok := any(x).(spi.KeyDescriber); ok {
			return slices.Clone(d.Keys())
		}
	}
	return nil
}

func (c *Catalogs) points() []lister {
	return []lister{c.Transport, c.Registry, c.LoadBalance, c.Codec, c.Heartbeat, c.Cluster, c.Filter}
}

// Describe lists every point, sorted by name, with its extensions sorted by
// name, each with the URL keys it declares (ExtensionInfo.Keys).
func (c *Catalogs) Describe() []PointInfo {
	var out []PointInfo
	for _, p := range c.points() {
		info := PointInfo{Name: p.Name(), Key: p.Key(), Default: p.Default()}
		for _, n := range p.Names() {
			o, _ := p.Origin(n)
			info.Extensions = append(info.Extensions, ExtensionInfo{Name: n, Origin: o, Keys: p.keysOf(n)})
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Choice is how one point resolves for the service or one method of a URL.
type Choice struct {
	Point  string // "loadbalance"
	Method string // "" for the service level
	Selection
	Origin Origin // where the chosen extension comes from; "" when unknown
	Err    error  // unknown name, or the extension's Build rejected the URL
}

// FilterChoice is the filter chain of one side for the service or a method.
type FilterChoice struct {
	Side   spi.Side // the chain's side: spi.Consumer or spi.Provider
	Method string   // "" for the service level
	Names  []string // outermost first
	Source string   // the "filter" key that edited the activated set, or "activated"
	// Err is why the chain cannot be built as the URL says: an unknown
	// filter name (with its did-you-mean) or the Build errors of the
	// filters in Names, joined; nil when every filter builds.
	Err error
}

// Explanation is what Explain found for one URL.
type Explanation struct {
	URL     spi.URL        // the URL explained, as given
	Methods []string       // the methods explained besides the service level, as given (a copy)
	Points  []Choice       // sorted by point, service level first, then methods in order
	Filters []FilterChoice // consumer then provider; a method appears only where it differs
}

// Err returns every error of the explanation joined, or nil.
func (e *Explanation) Err() error {
	var errs []error
	for _, c := range e.Points {
		if c.Err != nil {
			errs = append(errs, c.Err)
		}
	}
	for _, f := range e.Filters {
		if f.Err != nil {
			errs = append(errs, f.Err)
		}
	}
	return errors.Join(dedupe(errs)...)
}

// Explain resolves, for u and for the service and each of methods, the
// extension every URL-selected point chooses (transport, loadbalance, codec,
// heartbeat, cluster) and the filter chain of each side, saying which key
// or default chose it. The registry point is left out: it is chosen by the
// registry URL's scheme (see ExplainRegistry). It then builds every chosen
// extension with u, so a malformed key of a chosen extension is reported
// too. The returned error is Explanation.Err: unknown names (with their
// did-you-mean) and Build errors, each once.
func (c *Catalogs) Explain(u spi.URL, methods []string) (*Explanation, error) {
	return c.explain(u, methods, []spi.Side{spi.Consumer, spi.Provider})
}

// ExplainSide is Explain with the filter chain of side only: a check of
// one side's URL (serve's of the URLs it exports: the provider's chain)
// builds no filter of the other side, whose Build, a plugin's that hangs
// included, it would wait for in vain.
func (c *Catalogs) ExplainSide(u spi.URL, methods []string, side spi.Side) (*Explanation, error) {
	return c.explain(u, methods, []spi.Side{side})
}

func (c *Catalogs) explain(u spi.URL, methods []string, sides []spi.Side) (*Explanation, error) {
	e := &Explanation{URL: u, Methods: slices.Clone(methods)}
	scopes := append([]string{""}, methods...)

	type pointer struct {
		lister
		build func(name string) error
	}
	built := map[string]error{}
	// buildAs builds name once per key (a point, or a point and a side)
	// and prefixes its error with point unless it names itself.
	buildAs := func(key, point, name string, b func() error) error {
		k := key + "/" + name
		if err, ok := built[k]; ok {
			return err
		}
		_, err := Build(point, name, func() (struct{}, error) { return struct{}{}, b() })
		built[k] = err
		return err
	}
	buildOnce := func(point, name string, b func() error) error { return buildAs(point, point, name, b) }
	hbURL := c.Heartbeat.Normalize(u)
	pts := []pointer{
		{c.Cluster, func(n string) error {
			x, err := c.Cluster.Get(n)
			if err != nil {
				return err
			}
			return buildOnce(PointCluster, n, func() error { _, err := x.Build(u); return err })
		}},
		{c.Codec, func(n string) error { _, err := c.Codec.Get(n); return err }},
		{c.Heartbeat, func(n string) error {
			x, err := c.Heartbeat.Get(n)
			if err != nil {
				return err
			}
			return buildOnce(PointHeartbeat, n, func() error { _, err := x.Build(hbURL); return c.Heartbeat.BareNumberError(u, err) })
		}},
		{c.LoadBalance, func(n string) error {
			x, err := c.LoadBalance.Get(n)
			if err != nil {
				return err
			}
			return buildOnce(PointLoadBalance, n, func() error { _, err := x.Build(u); return err })
		}},
		{c.Transport, func(n string) error {
			x, err := c.Transport.Get(n)
			if err != nil {
				return err
			}
			return buildOnce(PointTransport, n, func() error { _, err := x.Build(u); return err })
		}},
	}
	for _, p := range pts {
		for _, m := range scopes {
			sel := choose(p.lister, u, m)
			ch := Choice{Point: p.Name(), Method: m, Selection: sel}
			ch.Origin, _ = p.Origin(sel.Name)
			ch.Err = emptyKeyAsWritten(p.build(sel.Name), sel)
			e.Points = append(e.Points, ch)
		}
	}

	for _, side := range sides {
		// The kernel sets "side" on the URL it builds each side's filters
		// with (Refer: consumer, Export: provider); so does Explain.
		su := u.With(spi.KeySide, string(side))
		var service []string
		for _, m := range scopes {
			fc := FilterChoice{Side: side, Method: m, Source: "activated"}
			if _, src, ok := u.MethodParam(m, c.Filter.Key()); ok {
				fc.Source = src
			}
			chain, err := ActivateFilters(c.Filter, su, side, m)
			if err != nil {
				fc.Err = err
			}
			for _, f := range chain {
				fc.Names = append(fc.Names, f.Name())
				if err := buildAs(PointFilter+"/"+string(side), PointFilter, f.Name(), func() error { _, err := f.Build(su); return err }); err != nil {
					fc.Err = errors.Join(fc.Err, err)
				}
			}
			if m == "" {
				service = fc.Names
			} else if fc.Err == nil && slices.Equal(fc.Names, service) {
				continue
			}
			e.Filters = append(e.Filters, fc)
		}
	}
	return e, e.Err()
}

// ExplainRegistry resolves the registry extension of a registry URL
// ("zookeeper://127.0.0.1:2181" selects "zookeeper") and builds it.
func (c *Catalogs) ExplainRegistry(registry spi.URL) Choice {
	sel := c.Registry.Choose(registry, "")
	ch := Choice{Point: PointRegistry, Selection: sel}
	ch.Origin, _ = c.Registry.Origin(sel.Name)
	x, err := c.Registry.Get(sel.Name)
	if err == nil {
		_, err = Build(PointRegistry, sel.Name, func() (spi.Registry, error) { return x.Build(registry) })
	}
	ch.Err = err
	return ch
}

// choose is Point.Choose through the lister interface.
func choose(p lister, u spi.URL, method string) Selection {
	if c, ok := p.(interface {
		Choose(spi.URL, string) Selection
	}); ok {
		return c.Choose(u, method)
	}
	return Selection{Name: p.Default(), Source: SourceDefault}
}

// ReferencedMethods returns the methods u mentions, in first-seen order:
// those of the "methods" list, then those named by "methods.<m>.<key>"
// keys (sorted by key).
func ReferencedMethods(u spi.URL) []string {
	var out []string
	seen := map[string]bool{}
	add := func(m string) {
		if m != "" && !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	for _, m := range u.Methods() {
		add(strings.TrimSpace(m))
	}
	for _, k := range u.Keys() {
		if rest, ok := strings.CutPrefix(k, spi.KeyMethods+"."); ok {
			if m, _, ok := strings.Cut(rest, "."); ok {
				add(m)
			}
		}
	}
	return out
}

// dedupe drops errors whose message repeats an earlier one (the same
// unknown name chosen for the service and every method).
func dedupe(errs []error) []error {
	seen := map[string]bool{}
	out := errs[:0]
	for _, err := range errs {
		if s := err.Error(); !seen[s] {
			seen[s] = true
			out = append(out, err)
		}
	}
	return out
}
