package cli

import (
	"strings"
	"testing"
)

// nu39 #2: serve checks Dubbo's "<m>.<key>" spelling of a method-level
// key as it checks "methods.<m>.<key>": before Export adds "methods",
// "Echo.loadbalance=nosuch", "Echo.weight=-1" and "Echo.warmup=abc"
// started and were published.
func TestE2E_ServeChecksBothMethodSpellings(t *testing.T) {
	for _, tc := range []struct{ param, want string }{
		{"loadbalance=nosuch", `unknown loadbalance "nosuch"`},
		{"weight=-1", "want an integer ≥ 0"},
		{"warmup=abc", "want a duration"},
		{"hash.nodes=0", "hash.nodes"},
	} {
		for _, form := range []string{"Echo.", "methods.Echo."} {
			p := form + tc.param
			out := serveFails(t, "-p", p)
			if !strings.Contains(out, "service demo.Echo") || !strings.Contains(out, tc.want) {
				t.Errorf("serve -p %s: output does not name the service and %q:\n%s", p, tc.want, out)
			}
		}
	}
}

// nu39 #9: one wording per key, naming the service and what is allowed:
// weight=abc said only "want an integer" without the service, warmup=-1s
// "a positive duration" though 0 is allowed, and hash.nodes' upper bound
// was stated in some places only.
func TestE2E_ServeBalancerKeyMessages(t *testing.T) {
	for _, tc := range []struct{ param, want string }{
		{"weight=abc", `service demo.Echo: invalid value "abc" for URL key "weight": want an integer ≥ 0`},
		{"warmup=-1s", `service demo.Echo: invalid value "-1s" for URL key "warmup": want a duration ≥ 0 (0: none), not a negative one`},
		{"Echo.warmup=-2s", `invalid value "-2s" for URL key "Echo.warmup": want a duration ≥ 0 (0: none), not a negative one`},
		{"hash.nodes=70000", `invalid value "70000" for URL key "hash.nodes": want an integer from 1 to 65536`},
	} {
		if out := serveFails(t, "-p", tc.param); !strings.Contains(out, tc.want) {
			t.Errorf("serve -p %s: want %q in:\n%s", tc.param, tc.want, out)
		}
	}
}
