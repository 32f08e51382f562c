package consistenthash_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/lb/consistenthash"
	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestConformance(t *testing.T) { spitest.TestLoadBalance(t, consistenthash.Builder{}) }

func build(t *testing.T, query string) spi.LoadBalance {
	t.Helper()
	lb, err := consistenthash.Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo" + query))
	if err != nil {
		t.Fatal(err)
	}
	return lb
}

func provider(i int, params string) spi.Invoker {
	return spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo?%s", i, params)), nil)
}

const keys = 10_000

// assign maps each key to the address of the provider it goes to.
func assign(lb spi.LoadBalance, l []spi.Invoker) []string {
	out := make([]string, keys)
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{""}}
	for k := range out {
		inv.Args[0] = "user-" + strconv.Itoa(k)
		out[k] = lb.Select(l, inv).URL().Address()
	}
	return out
}

// L3: 4 providers, 10,000 keys, a 5th joins: 12-28% of the keys move, all
// to the new provider; shuffling the list or restarting a provider at the
// same address moves none.
func TestL3_Remapping(t *testing.T) {
	lb := build(t, "")
	four := []spi.Invoker{provider(1, ""), provider(2, ""), provider(3, ""), provider(4, "")}
	before := assign(lb, four)

	fifth := provider(5, "")
	after := assign(lb, append(four[:4:4], fifth))
	moved := 0
	for k := range before {
		if before[k] != after[k] {
			moved++
			if after[k] != fifth.URL().Address() {
				t.Fatalf("key %d moved from %s to %s, not to the new provider", k, before[k], after[k])
			}
		}
	}
	frac := float64(moved) / keys
	t.Logf("%d of %d keys moved (%.1f%%)", moved, keys, 100*frac)
	if frac < 0.12 || frac > 0.28 {
		t.Fatalf("%.1f%% of the keys moved, want 12-28%%", 100*frac)
	}

	shuffled := []spi.Invoker{four[2], four[0], four[3], four[1]}
	restarted := []spi.Invoker{four[0], provider(2, "timestamp="+strconv.FormatInt(time.Now().UnixMilli(), 10)), four[2], four[3]}
	for name, l := range map[string][]spi.Invoker{"shuffled": shuffled, "restarted": restarted} {
		got := assign(lb, l)
		for k := range before {
			if got[k] != before[k] {
				t.Fatalf("%s: key %d moved from %s to %s", name, k, before[k], got[k])
			}
		}
	}
	// A restarted provider's new invoker gets its keys, not the old one.
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{""}}
	for k := range keys {
		inv.Args[0] = "user-" + strconv.Itoa(k)
		if before[k] == restarted[1].URL().Address() {
			if x := lb.Select(restarted, inv); x != restarted[1] {
				t.Fatalf("key %d went to %v, want the restarted provider's new invoker", k, x)
			}
			break
		}
	}
}

// A provider leaving moves only its own keys, to the providers a balancer
// that never saw it would choose (so the ring need not be rebuilt).
func TestProviderLeaves(t *testing.T) {
	lb := build(t, "")
	l := []spi.Invoker{provider(1, ""), provider(2, ""), provider(3, ""), provider(4, ""), provider(5, "")}
	before := assign(lb, l)
	rest := []spi.Invoker{l[0], l[1], l[3], l[4]}
	after := assign(lb, rest)
	fresh := assign(build(t, ""), rest)
	gone := l[2].URL().Address()
	for k := range before {
		if after[k] != fresh[k] {
			t.Fatalf("key %d: %s, but a fresh ring says %s", k, after[k], fresh[k])
		}
		if before[k] != gone && after[k] != before[k] {
			t.Fatalf("key %d moved from %s although its provider stayed", k, before[k])
		}
	}
}

// The same ring is used by every consumer: a fresh balancer agrees.
func TestStableAcrossBalancers(t *testing.T) {
	l := []spi.Invoker{provider(1, ""), provider(2, ""), provider(3, "")}
	a, b := assign(build(t, ""), l), assign(build(t, ""), l)
	for k := range a {
		if a[k] != b[k] {
			t.Fatalf("key %d: %s vs %s", k, a[k], b[k])
		}
	}
}

func TestSpread(t *testing.T) {
	l := []spi.Invoker{provider(1, ""), provider(2, ""), provider(3, ""), provider(4, "")}
	counts := map[string]int{}
	for _, a := range assign(build(t, ""), l) {
		counts[a]++
	}
	for a, n := range counts {
		if n < keys/4*6/10 || n > keys/4*14/10 {
			t.Errorf("%s got %d of %d keys, want within ±40%% of %d", a, n, keys, keys/4)
		}
	}
}

func TestHashArguments(t *testing.T) {
	l := []spi.Invoker{provider(1, ""), provider(2, ""), provider(3, ""), provider(4, ""), provider(5, "")}
	pick := func(lb spi.LoadBalance, method string, args ...any) spi.Invoker {
		return lb.Select(l, &spi.Invocation{Service: "demo.Echo", Method: method, Args: args})
	}
	// Default: only argument 0 counts.
	lb := build(t, "")
	for i := range 200 {
		if pick(lb, "Echo", "k", i) != pick(lb, "Echo", "k", -i) {
			t.Fatal("argument 1 changed the pick with hash.arguments=0")
		}
	}
	// hash.arguments=1: only argument 1 counts; numbers hash as text.
	lb = build(t, "?hash.arguments=1")
	differs := false
	for i := range 200 {
		if pick(lb, "Echo", "a", i) != pick(lb, "Echo", "b", i) {
			t.Fatal("argument 0 changed the pick with hash.arguments=1")
		}
		if pick(lb, "Echo", "a", i) != pick(lb, "Echo", "a", strconv.Itoa(i)) {
			t.Fatal("int and its decimal string hash differently")
		}
		differs = differs || pick(lb, "Echo", "a", i) != pick(lb, "Echo", "a", i+1000)
	}
	if !differs {
		t.Fatal("argument 1 never changed the pick")
	}
	// Method level: only Sleep hashes argument 1.
	lb = build(t, "?methods.Sleep.hash.arguments=1")
	for i := range 200 {
		if pick(lb, "Echo", "k", i) != pick(lb, "Echo", "k", -i) {
			t.Fatal("Echo uses the Sleep setting")
		}
		if pick(lb, "Sleep", "a", i) != pick(lb, "Sleep", "b", i) {
			t.Fatal("Sleep ignores methods.Sleep.hash.arguments=1")
		}
	}
	// Missing arguments are skipped, never a panic.
	pick(build(t, "?hash.arguments=0,7"), "Echo")
}

func TestBuildErrors(t *testing.T) {
	cases := map[string]string{
		"hash.nodes=abc":                  "hash.nodes",
		"hash.nodes=0":                    "hash.nodes",
		"hash.nodes=-4":                   "hash.nodes",
		"hash.nodes=70000":                "hash.nodes",
		"hash.arguments=x":                "hash.arguments",
		"hash.arguments=0,-1":             "hash.arguments",
		"hash.arguments=":                 "hash.arguments",
		"methods.Echo.hash.nodes=many":    "methods.Echo.hash.nodes",
		"methods=Echo&Echo.hash.nodes=-1": "Echo.hash.nodes",
	}
	for q, key := range cases {
		_, err := consistenthash.Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo?" + q))
		var pe *spi.ParamError
		if !errors.As(err, &pe) || pe.Key != key {
			t.Errorf("%s: got %v, want a ParamError for key %s", q, err, key)
		}
	}
	if _, err := (consistenthash.Builder{}).Build(spi.MustParse("consumer://h/demo.Echo?hash.nodes=8&hash.arguments=0,%201")); err != nil {
		t.Fatal(err)
	}
}

func TestSelectDoesNotAllocate(t *testing.T) {
	lb := build(t, "?hash.arguments=0,1")
	var l []spi.Invoker
	for i := range 10 {
		l = append(l, provider(i+1, ""))
	}
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"user-42", int64(7)}}
	lb.Select(l, inv)
	rand.Shuffle(len(l), func(i, j int) { l[i], l[j] = l[j], l[i] })
	if n := testing.AllocsPerRun(1000, func() { lb.Select(l, inv) }); n != 0 {
		t.Fatalf("Select allocates %v times per call", n)
	}
}

// hash.arguments naming no argument of a call (indexes start at 0: "1"
// for a one-argument method) sends every call to one provider; the first
// such call is logged once, naming the key and the method.
func TestArgumentsOutOfRangeWarnsOnce(t *testing.T) {
	lb, buf, l := loggedBalancer(t, "?methods.Echo.hash.arguments=1")
	for k := range 100 {
		lb.Select(l, &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"user-" + strconv.Itoa(k)}})
		lb.Select(l, &spi.Invocation{Service: "demo.Echo", Method: "Other", Args: []any{"user-" + strconv.Itoa(k)}}) // default: argument 0
	}
	out := buf.String()
	if n := strings.Count(out, "names no argument"); n != 1 || !strings.Contains(out, "key=methods.Echo.hash.arguments") || !strings.Contains(out, "method=Echo") {
		t.Fatalf("want one warning naming methods.Echo.hash.arguments and Echo, got:\n%s", out)
	}
}

// loggedBalancer builds a balancer of consumer://10.0.0.9/demo.Echo with
// query (e.g. "?hash.arguments=1") logging to the returned buffer, and
// returns 3 providers for it.
func loggedBalancer(t *testing.T, query string) (spi.LoadBalance, *bytes.Buffer, []spi.Invoker) {
	t.Helper()
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	lb, err := consistenthash.New(warmup.WithLogger(log)).Build(spi.MustParse("consumer://10.0.0.9/demo.Echo" + query))
	if err != nil {
		t.Fatal(err)
	}
	return lb, &buf, []spi.Invoker{provider(1, ""), provider(2, ""), provider(3, "")}
}

// A method called with no argument (demo.Echo's Info) has nothing to
// hash under the default hash.arguments=0: every call goes to one
// provider. It is warned of once per method, whichever calls come
// between (tester99 #3).
func TestNoArgumentMethodWarnsOncePerMethod(t *testing.T) {
	lb, buf, l := loggedBalancer(t, "")
	picked := map[spi.Invoker]int{}
	for k := range 100 {
		picked[lb.Select(l, &spi.Invocation{Service: "demo.Echo", Method: "Info"})]++
		lb.Select(l, &spi.Invocation{Service: "demo.Echo", Method: "Stats", Args: []any{}})
		lb.Select(l, &spi.Invocation{Service: "demo.Echo", Method: "Echo", Args: []any{"user-" + strconv.Itoa(k)}})
	}
	if len(picked) != 1 {
		t.Fatalf("100 calls with no argument went to %d providers, want 1", len(picked))
	}
	out := buf.String()
	const text = "is called with no argument, so consistenthash has nothing to hash: every call of it goes to one provider"
	if n := strings.Count(out, text); n != 2 {
		t.Fatalf("want 2 warnings (Info, Stats), got %d:\n%s", n, out)
	}
	for _, want := range []string{`msg="method Info is called with no argument`, "methods.Info.loadbalance=roundrobin", "key=hash.arguments value=0 method=Info arguments=0",
		`msg="method Stats is called with no argument`} {
		if !strings.Contains(out, want) {
			t.Errorf("warnings lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "method=Echo") || strings.Contains(out, "names no argument") {
		t.Errorf("Echo's calls hash their argument, yet:\n%s", out)
	}
}

// An index given twice hashes the same argument twice, which spreads the
// keys no better: Build refuses it naming the key, the value and the
// index, service-level and method-level alike (tester99 #5).
func TestArgumentsGivenTwiceRefused(t *testing.T) {
	for _, tc := range []struct{ query, key, value, index string }{
		{"hash.arguments=0,0", "hash.arguments", "0,0", "0"},
		{"hash.arguments=1,%202,1", "hash.arguments", "1, 2,1", "1"},
		{"methods.Echo.hash.arguments=2,2", "methods.Echo.hash.arguments", "2,2", "2"},
	} {
		_, err := (consistenthash.Builder{}).Build(spi.MustParse("consumer://h/demo.Echo?" + tc.query))
		var pe *spi.ParamError
		if !errors.As(err, &pe) || pe.Key != tc.key || pe.Value != tc.value || !strings.Contains(err.Error(), "("+tc.index+" is given twice)") {
			t.Errorf("%s: got %v, want a *spi.ParamError naming %s=%q and %s given twice", tc.query, err, tc.key, tc.value, tc.index)
		}
	}
}
