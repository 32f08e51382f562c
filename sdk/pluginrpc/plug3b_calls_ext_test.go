package pluginrpc_test

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// statusNames matches the status names an error text carries.
var statusNames = regexp.MustCompile(`\b[A-Z]+(?:_[A-Z]+)+\b`)

// names returns the status names of s (spi's names, upper case with an
// underscore).
func names(s string) []string {
	var out []string
	for _, m := range statusNames.FindAllString(s, -1) {
		for st := spi.Status(1); st < 200; st++ {
			if st.String() == m {
				out = append(out, m)
			}
		}
	}
	return out
}

// tester36 F4: a filter plugin whose process dies during the call is said
// to have died, in airnode's words, not gRPC's "error reading from
// server". (That a panic names the plugin, with its side's status:
// TestPlug4FilterPluginPanicHasItsSidesStatus.) On a provider it is
// SERVICE_NOT_FOUND, the not-run answer a failover consumer retries on
// another provider (fix-cr #2: the filter died before calling next, so
// the method did not start).
func TestPlug3bFilterPluginPanicAndDeathNameThePlugin(t *testing.T) {
	for _, tc := range []struct {
		side spi.Side
		st   spi.Status
	}{{spi.Provider, spi.StatusServiceNotFound}, {spi.Consumer, spi.StatusClientError}} {
		c := startMoody(t, "F_MODE=exit")
		fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.tenant", Source: pluginrpc.StaticSource(c)})
		f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=" + string(tc.side)))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		res := f.Invoke(context.Background(), seen(&got), &spi.Invocation{Service: "demo.Echo", Method: "Echo"})
		if res.Err == nil || spi.StatusOf(res.Err) != tc.st || got != nil {
			t.Fatalf("%s side, exit: %v; want %v and the call not passed", tc.side, res.Err, tc.st)
		}
		msg := res.Err.Error()
		for _, w := range []string{`filter "acme.tenant"`, "the plugin process died or its connection broke", "the call did not run"} {
			if !strings.Contains(msg, w) {
				t.Errorf("%s side, exit: %q does not say %q", tc.side, msg, w)
			}
		}
		if strings.Contains(msg, "Unavailable") || len(names(msg)) != 1 {
			t.Errorf("%s side, exit: %q: want airnode's words and one status name", tc.side, msg)
		}
	}
}

// downSource is a plugin that is restarting: the host's error, a
// SERVER_ERROR naming it.
type downSource struct{}

func (downSource) Current() (*pluginrpc.Client, uint64, error) {
	return nil, 0, &spi.Error{Status: spi.StatusServerError, Message: `pluginhost: service plugin "nu.chaos" is unavailable (restarting: exit status 4; restart in 100ms)`}
}
func (downSource) Changed() <-chan struct{} { return nil }

// tester36 F5: a call to a service plugin that is down is SERVICE_NOT_FOUND
// with one status name in its message (it carried the host's SERVER_ERROR
// inside it); a filter plugin that is down names one status too.
func TestPlug3bPluginDownOneStatusPerMessage(t *testing.T) {
	inv := pluginrpc.NewServiceInvoker(pluginrpc.ServiceOptions{Service: "nu.Chaos", URL: spi.MustParse("airnode://127.0.0.1/nu.Chaos"), Source: downSource{}})
	res := inv.Invoke(context.Background(), &spi.Invocation{Service: "nu.Chaos", Method: "Hello"})
	want := `SERVICE_NOT_FOUND: service nu.Chaos: pluginhost: service plugin "nu.chaos" is unavailable (restarting: exit status 4; restart in 100ms) (the call did not run)`
	if res.Err == nil || res.Err.Error() != want || !errors.Is(res.Err, spi.ErrServiceNotFound) {
		t.Errorf("service plugin down: %v\nwant %s", res.Err, want)
	}
	for _, side := range []spi.Side{spi.Provider, spi.Consumer} {
		fb := pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: "acme.tenant", Source: downSource{}})
		f, err := fb.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=" + string(side)))
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		res := f.Invoke(context.Background(), seen(&got), &spi.Invocation{Service: "demo.Echo", Method: "Echo"})
		if res.Err == nil || len(names(res.Err.Error())) != 1 || !strings.Contains(res.Err.Error(), `filter "acme.tenant": pluginhost: service plugin`) {
			t.Errorf("%s filter plugin down: %v; want one status name", side, res.Err)
		}
	}
}

// tester36 F6: at the default call timeout (1 s, the "timeout" key unset,
// no deadline on the ctx: `airnode call`'s defaults), a balancer plugin
// whose Select hangs is cut at half of it and the call goes on with the
// fallback; it used to wait the whole 1 s, the bound equal to the call's,
// and fail CLIENT_TIMEOUT.
func TestPlug3bHungSelectFallsBackAtTheDefaultTimeout(t *testing.T) {
	env, _ := hangFile(t)
	var ev events
	lb := build(t, ev.options("acme.zonelb", startMoody(t, "LB_MODE=hang", env)), "airnode://127.0.0.1/demo.Echo")
	list := providers("")
	start := time.Now()
	x, err := lb.SelectContext(context.Background(), list, &spi.Invocation{Method: "Echo"})
	took := time.Since(start)
	if err != nil || x == nil {
		t.Fatalf("Select: %v, %v; want the fallback's pick", x, err)
	}
	if took < 400*time.Millisecond || took > 900*time.Millisecond {
		t.Fatalf("Select took %v; want about half of the 1s default timeout", took)
	}
	if b, _, _ := ev.get(); len(b) != 1 || b[0].Bound != 500*time.Millisecond || b[0].For != time.Second {
		t.Fatalf("bypass reports %+v; want one trip bounded at 500ms, bypassed for 1s", b)
	}
	// and a caller's deadline of 1 s, as `airnode call --timeout 1s` sets
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	time.Sleep(1100 * time.Millisecond) // the bypass is over: this call probes
	if x, err := lb.SelectContext(ctx, list, &spi.Invocation{Method: "Echo"}); err != nil || x == nil {
		t.Fatalf("probe under a deadline: %v, %v; want the fallback's pick", x, err)
	}
}

// tester36 F11: 1,300 Selects that fall back while the plugin is down are
// counted honestly in the rate-bounded warnings (in_burst reaches the
// count: ratelog's doublings), and one warning (nu48 F6: the level of
// those it ends) says the plugin answers again with how many fell back. The old warning said selects=1 and
// nothing when it was back.
func TestPlug3bFallbackCountedAndBackLogged(t *testing.T) {
	c := startMoody(t)
	src := &switchSource{c: c, gen: 1, changed: make(chan struct{})}
	var log logbuf.Buffer
	onFallback, onBack := pluginrpc.FallbackLog(slog.New(slog.NewTextHandler(&log, nil)))
	lb := build(t, pluginrpc.LoadBalanceOptions{Name: "acme.zonelb", Source: src, OnFallback: onFallback, OnBack: onBack}, "airnode://127.0.0.1/demo.Echo")
	list := providers("")
	inv := &spi.Invocation{Method: "Echo"}
	if _, err := lb.SelectContext(context.Background(), list, inv); err != nil {
		t.Fatal(err)
	}
	src.set(nil, &spi.Error{Status: spi.StatusServerError, Message: `pluginhost: loadbalance plugin "acme.zonelb" is unavailable (restarting: signal: killed; restart in 100ms)`})
	for range 1300 {
		if x, err := lb.SelectContext(context.Background(), list, inv); x == nil || err != nil {
			t.Fatalf("fallback: %v, %v", x, err)
		}
	}
	src.set(c, nil)
	for range 3 {
		if x, err := lb.SelectContext(context.Background(), list, inv); x != list[0] || err != nil {
			t.Fatalf("back: %v, %v; want the plugin's pick, the first", x, err)
		}
	}
	out := log.String()
	if n := strings.Count(out, "plugin balancer unavailable; using the default balancer"); n != 11 || !strings.Contains(out, "in_burst=1024") {
		t.Errorf("want 11 warnings (1, 2, 4 ... 1024), the last in_burst=1024; got %d:\n%s", n, out)
	}
	if n := strings.Count(out, "plugin balancer answers again"); n != 1 || !regexp.MustCompile(`level=WARN msg="plugin balancer answers again[^"]*" fell_back=1300 after=\d`).MatchString(out) {
		t.Errorf("want one warning (the level of those it ends) with fell_back=1300 and after; got %d:\n%s", n, out)
	}
	if strings.Contains(out, "selects=") {
		t.Errorf("the old count is still logged:\n%s", out)
	}
}
