package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/airnode/airnode/spi"
)

// t14svc fails every call of Fail with a SERVICE_ERROR (a business
// error) and of Unwell with a SERVER_ERROR (a framework failure).
type t14svc struct{}

func (t14svc) Fail(ctx context.Context, msg string) (string, error) { return "", errors.New(msg) }
func (t14svc) Unwell(ctx context.Context, msg string) (string, error) {
	return "", spi.Errorf(spi.StatusServerError, "%s", msg)
}
func (t14svc) Ok(ctx context.Context) (string, error) { return "ok", nil }

// jsonLog is a JSON logger into a buffer safe for concurrent use.
type jsonLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (j *jsonLog) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(lockedWriter{&j.mu, &j.buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// lines returns the lines logged, each decoded; it fails t on a line that
// is not a JSON object.
func (j *jsonLog) lines(t *testing.T) []map[string]any {
	t.Helper()
	j.mu.Lock()
	text := j.buf.String()
	j.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("a line is not JSON (%v): %q", err, l)
		}
		out = append(out, m)
	}
	return out
}

// find returns the first line whose msg starts with msg and whose fields
// include every field of want (compared as fmt %v).
func find(lines []map[string]any, msg string, want map[string]string) map[string]any {
next:
	for _, l := range lines {
		if s, _ := l["msg"].(string); !strings.HasPrefix(s, msg) {
			continue
		}
		for k, v := range want {
			if fmt.Sprint(l[k]) != v {
				continue next
			}
		}
		return l
	}
	return nil
}

// tester14 finding 6: the failsafe cluster and the accesslog filter log
// through the node's logger (kernel.WithLogger), each node's to its own,
// and the consumer's access line says that the call failsafe swallowed
// failed.
func TestT14_6_BundledExtensionsLogThroughTheNodeLogger(t *testing.T) {
	cat := testCatalogs(t) // one catalog set for every node, as bundle.Catalogs() users do
	var plog, clog, c2log jsonLog
	p := NewNode(cat, WithLogger(plog.logger()), WithShutdownWait(0))
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), t14svc{}, spi.MustParse("airnode://127.0.0.1:0/t14.Log?accesslog=true"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(clog.logger()))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+e.URL().Address()+"/t14.Log?cluster=failsafe&accesslog=true")
	var out string
	if err := r.Call(ctxT(t), "Unwell", []any{"flaky x"}, &out); err != nil || out != "" {
		t.Fatalf("failsafe call = %q, %v; want the zero result and no error", out, err)
	}
	c2 := NewNode(cat, WithLogger(c2log.logger()))
	t.Cleanup(func() { _ = c2.Close() })
	r2 := refer(t, c2, "airnode://"+e.URL().Address()+"/t14.Log?cluster=failsafe&accesslog=true")
	if err := r2.Call(ctxT(t), "Ok", nil, &out); err != nil || out != "ok" {
		t.Fatalf("Ok = %q, %v", out, err)
	}

	cl := clog.lines(t)
	if find(cl, "call failed, returning the zero result", map[string]string{"level": "WARN", "component": "cluster", "cluster": "failsafe", "service": "t14.Log", "method": "Unwell", "err": "SERVER_ERROR: flaky x"}) == nil {
		t.Errorf("no failsafe warning in the consumer node's log:\n%v", cl)
	}
	if find(cl, "access", map[string]string{"side": "consumer", "method": "Unwell", "status": "SERVER_ERROR", "swallowed": "true"}) == nil {
		t.Errorf("no consumer access line with status=SERVER_ERROR swallowed=true in the consumer node's log:\n%v", cl)
	}
	if find(cl, "access", map[string]string{"method": "Ok"}) != nil {
		t.Errorf("the other consumer node's call is in this node's log:\n%v", cl)
	}
	if find(c2log.lines(t), "access", map[string]string{"side": "consumer", "method": "Ok", "status": "OK"}) == nil {
		t.Errorf("no access line in the second consumer node's log:\n%v", c2log.lines(t))
	}
	pl := plog.lines(t)
	if find(pl, "access", map[string]string{"side": "provider", "method": "Unwell", "status": "SERVER_ERROR"}) == nil {
		t.Errorf("no provider access line in the provider node's log:\n%v", pl)
	}
	if find(pl, "access", map[string]string{"side": "consumer"}) != nil || find(pl, "failsafe", nil) != nil {
		t.Errorf("consumer lines in the provider node's log:\n%v", pl)
	}
}

// t14Err is a user's error type with a pointer receiver.
type t14Err struct{ code int }

func (e *t14Err) Error() string { return fmt.Sprintf("t14err %d", e.code) }

// t14errs returns errors the way tester14's errs_test.go does, through a
// direct-call shape (ctx, no argument, string result) and a reflective
// one (a struct argument).
type t14errs struct{}

type t14arg struct{ N int }

func (t14errs) TypedNil(ctx context.Context) (string, error) {
	var e *t14Err
	return "value", e
}
func (t14errs) TypedNilReflect(ctx context.Context, _ t14arg) (string, error) {
	var e *t14Err
	return "value", e
}
func (t14errs) NilSpiErr(ctx context.Context) (string, error) {
	var e *spi.Error
	return "value", e
}
func (t14errs) NilSpiErrReflect(ctx context.Context, _ t14arg) (string, error) {
	var e *spi.Error
	return "value", e
}
func (t14errs) NilSpiErrOnly(ctx context.Context) error {
	var e *spi.Error
	return e
}
func (t14errs) Wrapped(ctx context.Context) (string, error) {
	return "", fmt.Errorf("place: %w", spi.Errorf(spi.StatusBadRequest, "bad sku"))
}
func (t14errs) Joined(ctx context.Context) (string, error) {
	return "", errors.Join(errors.New("a"), spi.Errorf(spi.StatusServerTimeout, "b"))
}

// tester14 finding 8: a typed nil error is named, not reported as a panic;
// a nil *spi.Error is no error; a wrapped *spi.Error's status is rendered
// once.
func TestT14_8_TypedNilAndWrappedErrorsOverTheWire(t *testing.T) {
	_, e := export14(t, t14errs{}, "t14.Errs")
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/t14.Errs")
	for _, tc := range []struct {
		method string
		args   []any
		status spi.Status
		msg    string // the whole error text; "" for no error
	}{
		{"TypedNil", nil, spi.StatusServiceError, "SERVICE_ERROR: t14.Errs.TypedNil returned a nil *kernel.t14Err as a non-nil error"},
		{"TypedNilReflect", []any{t14arg{}}, spi.StatusServiceError, "SERVICE_ERROR: t14.Errs.TypedNilReflect returned a nil *kernel.t14Err as a non-nil error"},
		{"NilSpiErr", nil, spi.StatusOK, ""},
		{"NilSpiErrReflect", []any{t14arg{}}, spi.StatusOK, ""},
		{"Wrapped", nil, spi.StatusBadRequest, "BAD_REQUEST: place: bad sku"},
		{"Joined", nil, spi.StatusServerTimeout, "SERVER_TIMEOUT: a\nb"},
	} {
		var out string
		err := r.Call(ctxT(t), tc.method, tc.args, &out)
		if spi.StatusOf(err) != tc.status || tc.msg != "" && (err == nil || err.Error() != tc.msg) {
			t.Errorf("%s: %v (%v); want %v %q", tc.method, err, spi.StatusOf(err), tc.status, tc.msg)
		}
		if tc.status == spi.StatusOK && out != "value" {
			t.Errorf("%s: result %q, want the method's \"value\"", tc.method, out)
		}
	}
	if _, err := r.Invoke(ctxT(t), "NilSpiErrOnly"); err != nil {
		t.Errorf("NilSpiErrOnly: %v", err)
	}
	if err := r.Call(ctxT(t), "Wrapped", nil, nil); !errors.Is(err, spi.ErrBadRequest) {
		t.Errorf("Wrapped does not match spi.ErrBadRequest: %v", err)
	}
}

// spi.MethodError and spi.Errorf render a wrapped status once and keep
// what errors.Is and errors.As match.
func TestT14_8_StatusRenderedOnce(t *testing.T) {
	inner := spi.Errorf(spi.StatusBadRequest, "bad sku: %w", &t14Err{7})
	err := spi.MethodError("t.Orders", "Place", fmt.Errorf("place: %w", inner))
	var mine *t14Err
	if err.Error() != "BAD_REQUEST: place: bad sku: t14err 7" || !errors.Is(err, spi.ErrBadRequest) || !errors.Is(err, inner) || !errors.As(err, &mine) || mine.code != 7 {
		t.Errorf("MethodError = %q (Is BAD_REQUEST %v, Is inner %v, As %v)", err, errors.Is(err, spi.ErrBadRequest), errors.Is(err, inner), errors.As(err, &mine))
	}
	if err := spi.MethodError("t.Orders", "Place", inner); err != inner {
		t.Errorf("an *spi.Error returned as it is became %#v", err)
	}
	if got := spi.Errorf(spi.StatusBadRequest, "place: %w", spi.Errorf(spi.StatusBadRequest, "bad sku")).Error(); got != "BAD_REQUEST: place: bad sku" {
		t.Errorf("Errorf of a wrapped same status = %q", got)
	}
	if got := spi.Errorf(spi.StatusServiceError, "reserve: %w", spi.Errorf(spi.StatusBadRequest, "bad sku")).Error(); got != "SERVICE_ERROR: reserve: BAD_REQUEST: bad sku" {
		t.Errorf("Errorf of a wrapped other status = %q (the inner status says something: keep it)", got)
	}
	if got := (&spi.Error{Status: spi.StatusBadRequest, Message: "BAD_REQUEST: x"}).Error(); got != "BAD_REQUEST: x" {
		t.Errorf("a message starting with its status renders %q", got)
	}
	if err := spi.MethodError("t.Orders", "Place", (*spi.Error)(nil)); err != nil {
		t.Errorf("nil *spi.Error = %v, want nil", err)
	}
}

// export14 exports impl under service on a free loopback port of a new
// node logging into a buffer, and returns that log and the exporter.
func export14(t *testing.T, impl any, service string, query ...string) (*jsonLog, *Exporter) {
	t.Helper()
	var log jsonLog
	n := NewNode(testCatalogs(t), WithLogger(log.logger()), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	u := "airnode://127.0.0.1:0/" + service
	if len(query) > 0 {
		u += "?" + strings.Join(query, "&")
	}
	e, err := n.Export(ctxT(t), impl, spi.MustParse(u))
	if err != nil {
		t.Fatal(err)
	}
	return &log, e
}

// t14odd has methods of the servable result shapes that no call could
// reach or answer, and two that work; ran counts the calls that ran.
type t14odd struct{ ran *atomic.Int64 }

func (o t14odd) CtxNotFirst(a int, ctx context.Context) (int, error) { o.ran.Add(1); return a, nil }
func (o t14odd) Chan(ctx context.Context, c chan int) (int, error)   { o.ran.Add(1); return 0, nil }
func (o t14odd) Fn(ctx context.Context, f func() int) (int, error)   { o.ran.Add(1); return 0, nil }
func (o t14odd) RetChan(ctx context.Context) (chan int, error) {
	o.ran.Add(1)
	return make(chan int), nil
}
func (o t14odd) RetFn(ctx context.Context) (func(), error)        { o.ran.Add(1); return func() {}, nil }
func (o t14odd) Ok(ctx context.Context, s string) (string, error) { return "ok " + s, nil }
func (o t14odd) Any(ctx context.Context, v any) (string, error)   { return fmt.Sprint(v), nil }

// tester14 finding 5: Export serves no method that can never succeed; it
// warns naming each and why, and a call of one is SERVICE_NOT_FOUND saying
// why, before anything runs.
func TestT14_5_ExportSkipsMethodsNoCallCanReach(t *testing.T) {
	ran := new(atomic.Int64)
	log, e := export14(t, t14odd{ran}, "t14.Odd")
	if got := e.URL().ParamOr("methods", ""); got != "Any,Ok" {
		t.Errorf("methods=%s, want Any,Ok", got)
	}
	warned := log.lines(t)
	for _, tc := range []struct{ method, why string }{
		{"CtxNotFirst", "CtxNotFirst(int, context.Context) (int, error): context.Context is parameter 2; it must come first (elsewhere it would be read from the wire as argument 1)"},
		{"Chan", "Chan(context.Context, chan int) (int, error): argument 0 is a chan int, which no codec can send"},
		{"Fn", "argument 0 is a func() int, which no codec can send"},
		{"RetChan", "RetChan(context.Context) (chan int, error): the result is a chan int, which no codec can send"},
		{"RetFn", "the result is a func(), which no codec can send"},
	} {
		l := find(warned, "export t14.Odd: not serving method "+tc.method, map[string]string{"level": "WARN", "method": tc.method})
		if l == nil || !strings.Contains(l["msg"].(string), tc.why) {
			t.Errorf("%s: no warning saying %q:\n%v", tc.method, tc.why, warned)
		}
	}
	for _, codec := range []string{"msgpack", "json"} {
		r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/t14.Odd?codec="+codec)
		for _, call := range []struct {
			method string
			args   []any
			why    string
		}{
			{"CtxNotFirst", []any{1, nil}, "context.Context is parameter 2"},
			{"Chan", []any{nil}, "chan int, which no codec can send"},
			{"RetChan", nil, "the result is a chan int"},
			{"RetFn", nil, "the result is a func()"},
		} {
			_, err := r.Invoke(ctxT(t), call.method, call.args...)
			if spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), call.why) ||
				!strings.Contains(err.Error(), "methods: Any, Ok") {
				t.Errorf("[%s] %s: %v; want SERVICE_NOT_FOUND saying %q", codec, call.method, err, call.why)
			}
		}
		if v, err := r.Invoke(ctxT(t), "Ok", "x"); err != nil || v != "ok x" {
			t.Errorf("[%s] Ok = %v, %v", codec, v, err)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("%d calls of unservable methods ran", n)
	}
}

// t14user is a plain Go struct: not a proto.Message.
type t14user struct {
	ID   int64
	Name string
}

// t14users mixes methods the protobuf codec can carry (integers,
// strings, proto messages) with ones it cannot (plain structs).
type t14users struct{ ran *atomic.Int64 }

func (u t14users) Get(ctx context.Context, id int64) (t14user, error) {
	u.ran.Add(1)
	return t14user{ID: id, Name: "ann"}, nil
}
func (u t14users) Put(ctx context.Context, x *t14user) (string, error) {
	u.ran.Add(1)
	return x.Name, nil
}
func (u t14users) Count(ctx context.Context, prefix string) (int64, error) {
	return int64(len(prefix)), nil
}
func (u t14users) Greet(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
	return wrapperspb.String("hi " + in.GetValue()), nil
}

// tester14 finding 5: a method whose argument or result types the URL's
// codec cannot encode (codec=protobuf and a plain struct) is not served:
// a consumer through a registry, which takes the provider's codec, gets
// SERVICE_NOT_FOUND saying why instead of a SERIALIZATION_ERROR after the
// method ran.
func TestT14_5_ExportSkipsMethodsTheCodecCannotEncode(t *testing.T) {
	ran := new(atomic.Int64)
	reg := WithRegistry(spi.MustParse("memory://t14codec"))
	cat := testCatalogs(t)
	var log jsonLog
	p := NewNode(cat, WithLogger(log.logger()), WithShutdownWait(0), reg)
	t.Cleanup(func() { _ = p.Close() })
	e, err := p.Export(ctxT(t), t14users{ran}, spi.MustParse("airnode://127.0.0.1:0/t14.Users?codec=protobuf"))
	if err != nil {
		t.Fatal(err)
	}
	if got := e.URL().ParamOr("methods", ""); got != "Count,Greet" {
		t.Errorf("methods=%s, want Count,Greet", got)
	}
	lines := log.lines(t)
	for _, m := range []string{"Get", "Put"} {
		l := find(lines, "export t14.Users: not serving method "+m, map[string]string{"level": "WARN"})
		if l == nil || !strings.Contains(l["msg"].(string), "codec protobuf cannot encode") || !strings.Contains(l["msg"].(string), "kernel.t14user") {
			t.Errorf("%s: no warning naming the codec and the type:\n%v", m, lines)
		}
	}
	c := NewNode(cat, WithLogger(quiet), reg)
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode:///t14.Users")
	var u t14user
	if err := r.Call(ctxT(t), "Get", []any{int64(1)}, &u); spi.StatusOf(err) != spi.StatusServiceNotFound ||
		!strings.Contains(err.Error(), "codec protobuf cannot encode the result (kernel.t14user)") {
		t.Errorf("Get: %v; want SERVICE_NOT_FOUND naming the codec and the result", err)
	}
	var s string
	if err := r.Call(ctxT(t), "Put", []any{&t14user{Name: "bob"}}, &s); spi.StatusOf(err) == spi.StatusOK {
		t.Errorf("Put = %q, want an error", s)
	}
	var g wrapperspb.StringValue
	if err := r.Call(ctxT(t), "Greet", []any{wrapperspb.String("ann")}, &g); err != nil || g.GetValue() != "hi ann" {
		t.Errorf("Greet = %q, %v", g.GetValue(), err)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("%d calls of methods the codec cannot carry ran", n)
	}

	// The method-level codec key decides for its method; a service with no
	// method its codec can carry is refused.
	e2, err := p.Export(ctxT(t), t14users{ran}, spi.MustParse("airnode://127.0.0.1:0/t14.Users2?codec=protobuf&methods.Get.codec=json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := e2.URL().ParamOr("methods", ""); got != "Count,Get,Greet" {
		t.Errorf("with methods.Get.codec=json: methods=%s, want Count,Get,Greet", got)
	}
	_, err = p.Export(ctxT(t), t14onlyStructs{}, spi.MustParse("airnode://127.0.0.1:0/t14.Structs?codec=protobuf"))
	if err == nil || !strings.Contains(err.Error(), "no exported method") || !strings.Contains(err.Error(), "codec protobuf cannot encode") {
		t.Errorf("a service with no method protobuf can carry: %v", err)
	}
}

type t14onlyStructs struct{}

func (t14onlyStructs) Get(ctx context.Context) (t14user, error) { return t14user{}, nil }

// tester14 finding 13: an empty attachment key is refused as a reserved
// one is (CLIENT_ERROR, nothing sent); a generic provider is one function
// (spi.InvokerFunc).
func TestT14_13_EmptyAttachmentKeyAndInvokerFunc(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	var calls atomic.Int64
	e, err := n.ExportInvoker(ctxT(t), spi.MustParse("airnode://127.0.0.1:0/t14.Gen"), spi.InvokerFunc(func(ctx context.Context, inv *spi.Invocation) spi.Result {
		calls.Add(1)
		return spi.Result{Value: inv.Method + " " + fmt.Sprint(inv.Args...) + " " + spi.IncomingAttachments(ctx)["tenant"]}
	}))
	if err != nil {
		t.Fatal(err)
	}
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/t14.Gen")
	v, err := r.Invoke(spi.WithAttachments(ctxT(t), "tenant", "acme"), "Echo", "x")
	if err != nil || v != "Echo x acme" {
		t.Fatalf("generic Echo = %v, %v", v, err)
	}
	_, err = r.Invoke(spi.WithAttachments(ctxT(t), "", "x"), "Echo", "x")
	if spi.StatusOf(err) != spi.StatusClientError || !strings.Contains(err.Error(), "an attachment key is empty") {
		t.Errorf("empty key: %v; want CLIENT_ERROR saying the key is empty", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the provider ran %d calls, want 1 (the empty key's is not sent)", n)
	}
}

// The balancers' warnings go to the node's logger too (spi.LoggerUser):
// consistenthash's hash.arguments naming no argument of the call.
func TestT14_6_BalancerWarningsThroughTheNodeLogger(t *testing.T) {
	_, e := export14(t, t14svc{}, "t14.Hash")
	var clog jsonLog
	c := NewNode(testCatalogs(t), WithLogger(clog.logger()))
	t.Cleanup(func() { _ = c.Close() })
	r := refer(t, c, "airnode://"+e.URL().Address()+"/t14.Hash?loadbalance=consistenthash&hash.arguments=3")
	var out string
	if err := r.Call(ctxT(t), "Ok", nil, &out); err != nil || out != "ok" {
		t.Fatalf("Ok = %q, %v", out, err)
	}
	if find(clog.lines(t), "hash.arguments names no argument", map[string]string{"level": "WARN", "component": "loadbalance", "loadbalance": "consistenthash"}) == nil {
		t.Errorf("no consistenthash warning in the node's log:\n%v", clog.lines(t))
	}
}
