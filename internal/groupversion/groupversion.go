// Package groupversion is the rule by which a consumer's group and version
// select providers, shared by kernel/directory (which applies it to every
// list a registry pushes) and the registries that list the providers of an
// interface and filter them themselves (zookeeper: Dubbo's layout holds
// every group and version of an interface under one node). Extensions may
// not import the kernel (the import rules internal/archtest enforces), hence this package.
//
// A consumer's group or version is one value ("" is the value "no group"),
// a comma-separated list (Dubbo's multi-group reference, "a,b"; spaces
// around items trimmed, duplicates dropped) or "*" alone (any). An empty
// item ("a,,b") or an item holding '*' ("a*") is an error. A provider
// fits when its group is in the consumer's groups and its version in its
// versions; Dubbo's UrlUtils.isMatch accepts the same "*" and group lists
// (and versions only as one value or "*": airnode also takes a version
// list). Pure functions and values, safe for concurrent use.
package groupversion

import (
	"fmt"
	"slices"
	"strings"

	"github.com/airnode/airnode/spi"
)

// Set is what a consumer's group or version accepts: one value, a list,
// or any. The zero Set accepts nothing: make one with Parse.
type Set struct {
	any    bool
	values []string
}

// Parse reads a consumer's value v of key (spi.KeyGroup or
// spi.KeyVersion; key only names it in errors): "*" alone is any, a
// comma-separated list is those values. Errors name the key, the value
// and what is allowed (an *spi.KeyError).
func Parse(key, v string) (Set, error) {
	if v == "*" {
		return Set{any: true}, nil
	}
	if !strings.ContainsAny(v, ",*") {
		return Set{values: []string{v}}, nil
	}
	var s Set
	for _, x := range strings.Split(v, ",") {
		x = strings.TrimSpace(x)
		switch {
		case x == "":
			return Set{}, keyError(key, v, fmt.Sprintf("%s=%s: an empty item in the list (want %s=a,b, or %s=* for any)", key, v, key, key))
		case strings.Contains(x, "*"):
			return Set{}, keyError(key, v, fmt.Sprintf("%s=%s: %q is a pattern; %s takes one value, a comma-separated list (%s=a,b) or * alone for any", key, v, x, key, key))
		}
		if !slices.Contains(s.values, x) {
			s.values = append(s.values, x)
		}
	}
	return s, nil
}

// keyError is Parse's refusal of key=v: an *spi.KeyError, so that a
// command line that gave the value is told where (exit 2), as for any
// refused key.
func keyError(key, v, msg string) error {
	return &spi.KeyError{Keys: []string{key}, Values: []string{v}, Msg: msg}
}

// Has reports whether the set accepts v.
func (s Set) Has(v string) bool {
	return s.any || slices.Contains(s.values, v)
}

// Any reports whether the set is "*".
func (s Set) Any() bool { return s.any }

// Multi reports whether the set accepts more than one value: "*" or a
// list of several.
func (s Set) Multi() bool { return s.any || len(s.values) > 1 }

// Values returns the listed values in the order given, nil for "*"; the
// caller must not modify the slice.
func (s Set) Values() []string {
	return s.values
}

// Matcher holds what a consumer's group and version accept.
type Matcher struct {
	Groups, Versions Set
}

// ForConsumer reads consumer's group and version (absent: ""). Errors are
// Parse's.
func ForConsumer(consumer spi.URL) (Matcher, error) {
	var m Matcher
	var err error
	if m.Groups, err = Parse(spi.KeyGroup, consumer.ParamOr(spi.KeyGroup, "")); err != nil {
		return Matcher{}, err
	}
	if m.Versions, err = Parse(spi.KeyVersion, consumer.ParamOr(spi.KeyVersion, "")); err != nil {
		return Matcher{}, err
	}
	return m, nil
}

// Match reports whether provider's group and version (absent: "") are
// accepted. It does not compare interfaces.
func (m Matcher) Match(provider spi.URL) bool {
	return m.Groups.Has(provider.ParamOr(spi.KeyGroup, "")) && m.Versions.Has(provider.ParamOr(spi.KeyVersion, ""))
}

// Multi reports whether the consumer names more than one service key.
func (m Matcher) Multi() bool { return m.Groups.Multi() || m.Versions.Multi() }
