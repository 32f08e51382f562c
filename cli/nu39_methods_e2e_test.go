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
