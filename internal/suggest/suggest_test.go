package suggest_test

import (
	"testing"

	"github.com/airnode/airnode/internal/suggest"
)

func TestClosest(t *testing.T) {
	known := []string{"backup", "connect.timeout", "file.cache", "root", "session.timeout"}
	for name, want := range map[string]string{
		"sesion.timeout": "session.timeout",
		"conect.timeout": "connect.timeout",
		"rot":            "root",
		"zzzzzzz":        "",
		"path":           "",
		"colour":         "",
		"rooot":          "root",
		"file.cahce":     "file.cache", // a swap is one edit
		"bakcup":         "backup",
	} {
		if got := suggest.Closest(name, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", name, got, want)
		}
	}
	if d := suggest.Distance("kitten", "sitting"); d != 3 {
		t.Errorf("Distance(kitten, sitting) = %d, want 3", d)
	}
}

// TestClosestShortNames: a name of up to five bytes gets a suggestion one
// edit away only: "nope" is three edits from "token", "foo" two from
// "root"; "tokn", "tpc" and "wiat" are one (a swap counts one).
func TestClosestShortNames(t *testing.T) {
	filters := []string{"accesslog", "activelimit", "executelimit", "metrics", "threadlimit", "token"}
	for _, tc := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"nope", filters, ""},
		{"tokn", filters, "token"},
		{"tken", filters, "token"},
		{"tpc", []string{"smux", "tcp"}, "tcp"},
		{"foo", []string{"root", "poll"}, ""},
		{"pool", []string{"root", "poll"}, "poll"},
		{"wiat", []string{"timeout", "wait"}, "wait"},
		{"josn", []string{"json", "msgpack", "protobuf"}, "json"},
		{"al", []string{"adaptive", "all", "direct"}, "all"},
		{"randm", []string{"random", "roundrobin"}, "random"},
		{"rndm", []string{"random", "roundrobin"}, ""},
		{"rundrobin", []string{"random", "roundrobin"}, "roundrobin"},
		{"p2c-weighted", []string{"random", "roundrobin"}, ""},
	} {
		if got := suggest.Closest(tc.name, tc.candidates); got != tc.want {
			t.Errorf("Closest(%q, %v) = %q, want %q", tc.name, tc.candidates, got, tc.want)
		}
	}
	for n, want := range map[string]int{"": 1, "al": 1, "nope": 1, "token": 1, "random": 2, "session.timeout": 2} {
		if got := suggest.MaxDistance(n); got != want {
			t.Errorf("MaxDistance(%q) = %d, want %d", n, got, want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"abc", "abc", 0},
		{"tpc", "tcp", 1}, {"retires", "retries", 1}, {"ca", "abc", 3}, // OSA: no byte edited twice
		{"kitten", "sitting", 3}, {"nope", "token", 3},
	} {
		if got := suggest.Distance(tc.a, tc.b); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := suggest.Distance(tc.b, tc.a); got != tc.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

// tester9: "loadbalance=p2c" when plugins.yaml names the plugin acme.p2c.
func TestQualified(t *testing.T) {
	known := []string{"acme.p2c", "consistenthash", "acme.rr", "zeta.rr", "random"}
	for name, want := range map[string]string{
		"p2c":      "acme.p2c",
		"rr":       "", // two plugins end in .rr: neither is likelier
		"random":   "", // not qualified
		"2c":       "", // a suffix of a name, not a name
		"acme.p2c": "",
	} {
		if got := suggest.Qualified(name, known); got != want {
			t.Errorf("Qualified(%q) = %q, want %q", name, got, want)
		}
	}
}

// tester79 #4: "retry" is three edits from "retries", the likeliest typo
// of the key that matters most; Stem names it, and a word lengthened
// ("time", "Order") names the longer one, without crossing a "." into
// another key of a namespace.
func TestClosestStem(t *testing.T) {
	keys := []string{"heartbeat", "heartbeat.interval", "heartbeat.retries", "retries", "timestamp", "timeout", "weight"}
	for _, tc := range []struct {
		name       string
		candidates []string
		want       string
	}{
		{"retry", keys, "retries"},
		{"Retry", keys, "retries"},
		{"retrys", keys, "retries"},
		{"time", keys, "timeout"}, // not timestamp: the shorter rest wins
		{"timeouts", keys, "timeout"},
		{"Order", []string{"ID", "OrderID", "Total"}, "OrderID"},
		{"heartbeat.retry", keys, "heartbeat.retries"},
		{"heart", keys, "heartbeat"},
		{"heartbeat.int", keys, "heartbeat.interval"},
		{"heartbeat.ret", keys, "heartbeat.retries"},
		{"ret", keys, ""}, // shorter than MinStem
		{"tim", keys, ""},
		{"weigh", keys, "weight"}, // one edit: Closest's own rule
		{"heartbeat.", keys, "heartbeat"},
		{"beat", keys, ""},
	} {
		if got := suggest.Closest(tc.name, tc.candidates); got != tc.want {
			t.Errorf("Closest(%q, %v) = %q, want %q", tc.name, tc.candidates, got, tc.want)
		}
	}
}
