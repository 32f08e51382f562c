package kernel

import (
	"testing"

	"github.com/airnode/airnode/spi"
)

// TestT15D_ProviderAccessLogHasRejectedCalls (tester15 finding D): a
// provider whose export has accesslog on writes an access line for a
// call its service answers before the filter chain — a method it lacks
// (SERVICE_NOT_FOUND) and arguments that do not decode (BAD_REQUEST) —
// naming the consumer (remote), the service, the method and the status,
// with before_filters=true, as the consumer's access log does; a good
// call's line is unchanged (no before_filters). A provider without
// accesslog writes none.
func TestT15D_ProviderAccessLogHasRejectedCalls(t *testing.T) {
	cat := testCatalogs(t)
	var plog, qlog jsonLog
	p := NewNode(cat, WithLogger(plog.logger()), WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), t14svc{}, spi.MustParse("airnode://127.0.0.1:0/t15.Log?accesslog=true"))
	if err != nil {
		t.Fatal(err)
	}
	q := NewNode(cat, WithLogger(qlog.logger()), WithShutdownWait(0))
	t.Cleanup(func() { _ = q.Close() })
	qe, err := q.Export(ctxT(t), t14svc{}, spi.MustParse("airnode://127.0.0.1:0/t15.Quiet"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+e.URL().Address()+"/t15.Log?cluster=failfast")
	var out string
	if err := r.Call(ctxT(t), "Ok", nil, &out); err != nil || out != "ok" {
		t.Fatalf("Ok = %q, %v", out, err)
	}
	if err := r.Call(ctxT(t), "Nope", nil, &out); spi.StatusOf(err) != spi.StatusServiceNotFound {
		t.Fatalf("Nope: %v, want SERVICE_NOT_FOUND", err)
	}
	if err := r.Call(ctxT(t), "Fail", []any{map[string]any{"x": 1}}, &out); spi.StatusOf(err) != spi.StatusBadRequest {
		t.Fatalf("Fail with a map for its string: %v, want BAD_REQUEST", err)
	}
	rq := refer(t, c, "airnode://"+qe.URL().Address()+"/t15.Quiet?cluster=failfast")
	if err := rq.Call(ctxT(t), "Nope", nil, &out); spi.StatusOf(err) != spi.StatusServiceNotFound {
		t.Fatalf("Nope on the quiet provider: %v, want SERVICE_NOT_FOUND", err)
	}

	pl := plog.lines(t)
	ok := find(pl, "access", map[string]string{"side": "provider", "service": "t15.Log", "method": "Ok", "status": "OK"})
	if ok == nil {
		t.Fatalf("no access line for Ok:\n%v", pl)
	}
	if _, has := ok["before_filters"]; has {
		t.Errorf("the good call's line has before_filters: %v", ok)
	}
	for method, status := range map[string]string{"Nope": "SERVICE_NOT_FOUND", "Fail": "BAD_REQUEST"} {
		l := find(pl, "access", map[string]string{"side": "provider", "service": "t15.Log", "method": method, "status": status, "level": "INFO"})
		if l == nil {
			t.Errorf("no provider access line for %s with status %s:\n%v", method, status, pl)
			continue
		}
		if l["before_filters"] != true || l["consumer"] == "" || l["consumer"] == nil {
			t.Errorf("%s line %v, want before_filters=true and the consumer's address", method, l)
		}
	}
	if l := find(qlog.lines(t), "access", nil); l != nil {
		t.Errorf("a provider without accesslog logged %v", l)
	}
}
