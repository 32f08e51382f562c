package extension

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/airnode/airnode/spi"
)

// Filter list tokens (Dubbo's ExtensionLoader.getActivateExtension).
const (
	// FilterDefault in the filter list stands for the activated set.
	FilterDefault = "default"
	// FilterRemove prefixes a name to remove it ("-accesslog"); "-default"
	// removes every activated filter.
	FilterRemove = "-"
)

// ActivateFilters returns the filter chain, outermost first, for one side
// of a call of method ("" for the service level) on u.
//
// The activated set is every filter whose Activation lists side and whose
// Activation.Key, if set, is present in u with a value other than
// "false" (any case: Dubbo's rule, so accesslog=false leaves the access
// log out of the chain; see offByFalse for a key declared of another
// type) (method-level first, as
// spi.URL.MethodParam resolves it; for the service level, method "", a
// PerMethod filter's Key set for any method counts too, by
// spi.URL.MethodsSetting's rule: "methods.<m>.<Key>", or "<m>.<Key>" for
// m in u's "methods" or, when u lists none, for an exported Go method
// name, so "sleep.executes" on a URL without "methods" is no method's,
// as for every other method-level key), sorted by Order then name. The URL's
// "filter" key, also resolved method-level first, is a comma list that
// edits it, as Dubbo's getActivateExtension does:
//
//   - "name" adds that filter; names are placed in the order given, after
//     the activated set unless "default" appears;
//   - "default" stands for the activated set at that position;
//   - "-name" removes that filter wherever it would appear;
//   - "-default" removes the whole activated set.
//
// A filter named explicitly is not repeated by the activated set, and a
// name listed twice (as happens when provider and consumer lists are
// concatenated by spi.MergeURL) appears once, at its first position. Blank
// entries are ignored. An unknown name, with or without "-", is an
// *UnknownError.
func ActivateFilters(p *Point[spi.FilterBuilder], u spi.URL, side spi.Side, method string) ([]spi.FilterBuilder, error) {
	names, err := FilterNames(p, u, side, method)
	if err != nil {
		return nil, err
	}
	chain := make([]spi.FilterBuilder, 0, len(names))
	for _, n := range names {
		f, err := p.Get(n)
		if err != nil {
			return nil, err
		}
		chain = append(chain, f)
	}
	return chain, nil
}

// FilterNames is ActivateFilters returning only the names of the chain.
func FilterNames(p *Point[spi.FilterBuilder], u spi.URL, side spi.Side, method string) ([]string, error) {
	activated := activatedNames(p, u, side, method)
	l, err := parseFilterList(p, u, method)
	if err != nil {
		return nil, err
	}
	list, removed, listed, hasDefault := l.list, l.removed, l.listed, l.hasDefault

	var defaults []string
	if !removed[FilterDefault] {
		for _, n := range activated {
			if !removed[n] && !listed[n] {
				defaults = append(defaults, n)
			}
		}
	}
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	if !hasDefault {
		for _, n := range defaults {
			add(n)
		}
	}
	for _, n := range list {
		switch {
		case n == FilterDefault:
			for _, d := range defaults {
				add(d)
			}
		case strings.HasPrefix(n, FilterRemove):
		case !removed[n]:
			add(n)
		}
	}
	return out, nil
}

// FilterRemoved reports whether u's "filter" key, read as FilterNames
// reads it (method "" for the service level), keeps filter name out of
// the chain whatever its activation: it lists "-name", or "-default"
// without listing name. It is how a filter whose activation is not known
// (a plugin that did not start: it is activated on no side) is known to
// be out of a chain all the same. false when the key is malformed or
// names an unknown filter (FilterNames' error).
func FilterRemoved(p *Point[spi.FilterBuilder], u spi.URL, method, name string) bool {
	l, err := parseFilterList(p, u, method)
	return err == nil && (l.removed[name] || l.removed[FilterDefault] && !l.listed[name])
}

// filterList is the "filter" key of a URL as FilterNames reads it: its
// entries in order, the names removed ("-name"; FilterDefault for
// "-default"), the names listed to add, and whether "default" is listed.
type filterList struct {
	list            []string
	removed, listed map[string]bool
	hasDefault      bool
}

// parseFilterList reads u's "filter" key for method (method-level first).
// Errors: an empty name after "-", a name p does not know
// (*UnknownError).
func parseFilterList(p *Point[spi.FilterBuilder], u spi.URL, method string) (filterList, error) {
	l := filterList{removed: map[string]bool{}, listed: map[string]bool{}}
	if v, _, ok := u.MethodParam(method, p.Key()); ok {
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" {
				l.list = append(l.list, n)
			}
		}
	}
	for _, n := range l.list {
		name, remove := strings.CutPrefix(n, FilterRemove)
		switch {
		case name == FilterDefault:
			if remove {
				l.removed[FilterDefault] = true
			} else {
				l.hasDefault = true
			}
			continue
		case name == "":
			return filterList{}, fmt.Errorf("%s: empty name after %q in %s=%q", p.Name(), FilterRemove, p.Key(), strings.Join(l.list, ","))
		}
		if _, ok := p.Origin(name); !ok {
			return filterList{}, &UnknownError{Point: p.Name(), Name: name, Available: p.Names(), Hint: p.MissHint()}
		}
		if remove {
			l.removed[name] = true
		} else {
			l.listed[name] = true
		}
	}
	return l, nil
}

// offByFalse reports whether key=false leaves filter f out of the chain:
// unless f declares key (spi.KeyDescriber) of a type "false" is not a
// value of (an int, a duration, a size...), whose Build is then left to
// refuse it ("actives=false": want an integer).
func offByFalse(f spi.FilterBuilder, key string) bool {
	d, ok := f.(spi.KeyDescriber)
	if !ok {
		return true
	}
	for _, k := range d.Keys() {
		if k.Key == key {
			return k.Type == "" || k.Type == spi.KeyTypeBool || k.Type == spi.KeyTypeString || k.Type == spi.KeyTypeEnum && slices.Contains(k.Values, "false")
		}
	}
	return true
}

// activatedNames returns the names of the filters activated for side on u,
// sorted by Activation.Order then name.
func activatedNames(p *Point[spi.FilterBuilder], u spi.URL, side spi.Side, method string) []string {
	type act struct {
		name  string
		order int
	}
	var acts []act
	for _, n := range p.Names() {
		f, err := p.Get(n)
		if err != nil {
			continue
		}
		a := f.Activation()
		if !slices.Contains(a.Sides, side) {
			continue
		}
		if a.Key != "" {
			v, _, ok := u.MethodParam(method, a.Key)
			if !ok && !(method == "" && a.PerMethod && len(u.MethodsSetting(a.Key)) > 0) {
				continue
			}
			if ok && strings.EqualFold(v, "false") && offByFalse(f, a.Key) {
				continue // Dubbo's rule: key=false switches it off (tester64)
			}
		}
		acts = append(acts, act{n, a.Order})
	}
	slices.SortFunc(acts, func(a, b act) int {
		return cmp.Or(cmp.Compare(a.order, b.order), strings.Compare(a.name, b.name))
	})
	names := make([]string, len(acts))
	for i, a := range acts {
		names[i] = a.name
	}
	return names
}
