package kernel

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// weird has one servable method and three that Export cannot serve, plus a
// String and a setup method returning its own type (not warned about).
type weird struct{}

func (weird) NoCtx(a int) int                                      { return a }
func (weird) TwoRes(ctx context.Context) (int, int, error)         { return 1, 2, nil }
func (weird) Variadic(ctx context.Context, xs ...int) (int, error) { return len(xs), nil }
func (weird) Ok(ctx context.Context, s string) (string, error)     { return s, nil }
func (weird) String() string                                       { return "weird" }
func (w weird) WithLimit(n int) weird                              { return w }

// Export warns once about each exported method it cannot serve, naming it
// and the shape wanted, and a call of one is SERVICE_NOT_FOUND saying why
// (tester7: they were dropped silently, "has no method NoCtx (methods: Ok)").
func TestExportWarnsAboutMethodsOfAnotherShape(t *testing.T) {
	var logs logbuf.Buffer
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownWait(0))
	defer n.Close()
	e, err := n.Export(ctxT(t), weird{}, spi.MustParse("airnode://127.0.0.1:0/edge.Weird"))
	if err != nil {
		t.Fatal(err)
	}
	log := logs.String()
	for _, want := range []string{
		"export edge.Weird: not serving method NoCtx(int) int: want M(ctx context.Context, args...) (R, error) or error",
		"export edge.Weird: not serving method TwoRes(context.Context) (int, int, error): want",
		"export edge.Weird: not serving method Variadic(context.Context, ...int) (int, error): variadic; want",
	} {
		if strings.Count(log, want) != 1 {
			t.Errorf("log lacks one %q:\n%s", want, log)
		}
	}
	if strings.Count(log, "level=WARN") != 3 || strings.Contains(log, "String()") || strings.Contains(log, "WithLimit") {
		t.Errorf("want three warnings, none for String or WithLimit:\n%s", log)
	}

	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/edge.Weird")
	if v, err := r.Invoke(ctxT(t), "Ok", "x"); err != nil || v != "x" {
		t.Fatalf("Ok = %v, %v", v, err)
	}
	for method, want := range map[string]string{
		"NoCtx":    `service "edge.Weird" has no method "NoCtx" of a servable shape (NoCtx(int) int: want M(ctx context.Context, args...) (R, error) or error, the context optional; methods: Ok)`,
		"Variadic": `has no method "Variadic" of a servable shape (Variadic(context.Context, ...int) (int, error): variadic; want`,
		"Nope":     `service "edge.Weird" has no method "Nope" (methods: Ok)`,
	} {
		_, err := r.Invoke(ctxT(t), method, 5)
		if spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want SERVICE_NOT_FOUND %q", method, err, want)
		}
	}
}

type allWrong struct{}

func (allWrong) A(int) int { return 0 }

// A value with no servable method is refused, naming the ones skipped.
func TestExportRefusesAValueWithNoServableMethod(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer n.Close()
	_, err := n.Export(ctxT(t), allWrong{}, spi.MustParse("airnode://127.0.0.1:0/edge.AllWrong"))
	if err == nil || !strings.Contains(err.Error(), "no exported method of shape") || !strings.Contains(err.Error(), "not served: A(int) int: want") {
		t.Fatalf("Export: %v", err)
	}
}
