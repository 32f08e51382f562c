package spi_test

import (
	"testing"

	"github.com/airnode/airnode/spi"
)

// spi.MethodLevelKey splits exactly the keys MethodParam reads for a
// method, and MethodsSetting lists those methods: the one rule the kernel
// (Refer's per-method strategies, Export's server-key check, the typo and
// unsupported-key warnings), the filters' activation and the clusters
// share.
func TestDub3_MethodLevelKeyIsMethodParamsRule(t *testing.T) {
	for _, tc := range []struct {
		query, k, method, key string
		ok                    bool
	}{
		{"Sleep.timeout=1s", "Sleep.timeout", "Sleep", "timeout", true},
		{"methods.Sleep.timeout=1s", "methods.Sleep.timeout", "Sleep", "timeout", true},
		{"methods.sleep.timeout=1s", "methods.sleep.timeout", "sleep", "timeout", true},
		{"Key.hash.arguments=1", "Key.hash.arguments", "Key", "hash.arguments", true},
		{"methods=sleep&sleep.timeout=1s", "sleep.timeout", "sleep", "timeout", true},
		{"sleep.timeout=1s", "sleep.timeout", "", "", false}, // a Java spelling: no Go method's
		{"heartbeat.retries=5", "heartbeat.retries", "", "", false},
		{"connect.timeout=1s", "connect.timeout", "", "", false},
		{"methods=Echo&Sleep.timeout=1s", "Sleep.timeout", "", "", false},
		{"timeout=1s", "timeout", "", "", false},
		{"methods.Sleep=1", "methods.Sleep", "", "", false},
	} {
		u := spi.MustParse("airnode://h:1/s?" + tc.query)
		m, key, ok := spi.MethodLevelKey(tc.k, u.Methods())
		if m != tc.method || key != tc.key || ok != tc.ok {
			t.Errorf("%s: MethodLevelKey(%q) = %q, %q, %v; want %q, %q, %v", tc.query, tc.k, m, key, ok, tc.method, tc.key, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if _, src, _ := u.MethodParam(m, key); src != tc.k {
			t.Errorf("%s: MethodParam(%q, %q) reads %q, want %q", tc.query, m, key, src, tc.k)
		}
		if got := u.MethodsSetting(key); len(got) != 1 || got[0] != m {
			t.Errorf("%s: MethodsSetting(%q) = %q, want [%s]", tc.query, key, got, m)
		}
	}
}
