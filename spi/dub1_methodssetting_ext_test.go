package spi_test

import (
	"slices"
	"testing"

	"github.com/airnode/airnode/spi"
)

// URL.MethodsSetting finds the methods MethodParam would resolve a
// method-level key for, in both spellings (tester35 finding 1: a
// balancer enumerating only "methods.<m>.<key>" missed Dubbo's
// "<m>.<key>" on a consumer URL, which lists no "methods").
func TestDub1_MethodsSettingBothSpellings(t *testing.T) {
	for q, want := range map[string][]string{
		"Key.hash.arguments=1":                          {"Key"},
		"methods.Key.hash.arguments=1&Who.hash.nodes=3": {"Who", "Key"}, // key order: "Who..." < "methods..."
		"hash.arguments=1&heartbeat.retries=5":          nil,            // service level; heartbeat is no method
		"key.hash.arguments=1":                          nil,            // no exported Go method
		"methods=Key&Who.hash.arguments=1":              nil,            // Who is not in "methods"
		"methods=Key,Who&Who.hash.arguments=1":          {"Who"},
		"Key.timeout=1s&Key.hash.nodes=2":               {"Key"},
	} {
		u := spi.MustParse("airnode://h:1/s?" + q)
		got := u.MethodsSetting("hash.arguments", "hash.nodes")
		if !slices.Equal(got, want) {
			t.Errorf("%s: MethodsSetting = %q, want %q", q, got, want)
		}
		for _, m := range got {
			if _, _, ok := u.MethodParam(m, "hash.arguments"); !ok {
				if _, _, ok := u.MethodParam(m, "hash.nodes"); !ok {
					t.Errorf("%s: MethodParam reads no key of method %s", q, m)
				}
			}
		}
	}
}
