package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// bindCalc is the provider of the Bind tests.
type bindCalc struct{}

func (bindCalc) Add(ctx context.Context, a, b int) (int, error) { return a + b, nil }

func (bindCalc) Div(ctx context.Context, a, b int) (int, error) {
	if b == 0 {
		return 0, spi.Errorf(spi.StatusBadRequest, "divide %d by zero", a)
	}
	return a / b, nil
}

func (bindCalc) Ping(ctx context.Context) error { return nil }

func (bindCalc) Names(ctx context.Context, prefix string, n int) ([]string, error) {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out, nil
}

// calcClient is what a consumer binds: one func field per method.
type calcClient struct {
	Add      func(ctx context.Context, a, b int) (int, error)
	Divide   func(ctx context.Context, a, b int) (int, error) `airnode:"Div"`
	Ping     func(ctx context.Context) error
	Names    func(ctx context.Context, prefix string, n int) ([]string, error)
	Missing  func(ctx context.Context) (string, error)
	Skipped  func(ctx context.Context) error `airnode:"-"`
	Label    string                          // not a func: left alone
	internal func()                          // unexported: left alone
}

// bindRef exports bindCalc on a free loopback port and refers to it directly.
func bindRef(t testing.TB) *kernel.Reference {
	return exportAndRefer(t, bindCalc{}, "test.Calc", "", "timeout=5s")
}

// exportAndRefer exports svc as service key (URL query exportQuery) on a
// free loopback port of a provider node and refers to it directly (query
// referQuery) from a consumer node, both with quiet logs and closed at
// the test's end.
func exportAndRefer(t testing.TB, svc any, key, exportQuery, referQuery string) *kernel.Reference {
	t.Helper()
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	provider := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { provider.Close() })
	exp, err := provider.Export(ctx, svc, spi.MustParse("airnode://127.0.0.1:0/"+key+"?"+exportQuery))
	if err != nil {
		t.Fatal(err)
	}
	consumer := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	t.Cleanup(func() { consumer.Close() })
	ref, err := consumer.Refer(ctx, spi.MustParse("airnode://"+exp.URL().Address()+"/"+key+"?"+referQuery), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func TestBindCallsTheProviderThroughTypedStubs(t *testing.T) {
	ref := bindRef(t)
	ctx := context.Background()
	c := calcClient{Label: "kept"}
	if err := ref.Bind(&c); err != nil {
		t.Fatal(err)
	}
	if sum, err := c.Add(ctx, 2, 3); err != nil || sum != 5 {
		t.Fatalf("Add(2, 3) = %d, %v; want 5, nil", sum, err)
	}
	if q, err := c.Divide(ctx, 7, 2); err != nil || q != 3 {
		t.Fatalf("Divide (tag Div)(7, 2) = %d, %v; want 3, nil", q, err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if names, err := c.Names(ctx, "n", 3); err != nil || strings.Join(names, ",") != "n0,n1,n2" {
		t.Fatalf("Names(n, 3) = %q, %v", names, err)
	}

	// the provider's failure comes back as Call returns it, with R's zero value
	q, err := c.Divide(ctx, 7, 0)
	if q != 0 || !errors.Is(err, spi.ErrBadRequest) || !strings.Contains(err.Error(), "divide 7 by zero") {
		t.Fatalf("Divide(7, 0) = %d, %v; want 0, BAD_REQUEST naming the division", q, err)
	}
	// a method the provider lacks fails at the call, naming the methods
	s, err := c.Missing(ctx)
	if s != "" || spi.StatusOf(err) != spi.StatusServiceNotFound || !strings.Contains(err.Error(), "Add") {
		t.Fatalf("Missing() = %q, %v; want SERVICE_NOT_FOUND listing the methods", s, err)
	}
	// a cancelled context fails as Call's does
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Add(cancelled, 1, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Add with a cancelled context: %v; want context.Canceled", err)
	}
	//lint:ignore SA1012 the nil context is what is tested
	if _, err := c.Add(nil, 1, 1); spi.StatusOf(err) != spi.StatusClientError || !strings.Contains(err.Error(), "nil context") { //nolint:staticcheck
		t.Fatalf("Add with a nil context: %v; want CLIENT_ERROR naming the nil context", err)
	}
	if c.Skipped != nil || c.internal != nil || c.Label != "kept" {
		t.Fatalf("Bind touched fields it must leave alone: Skipped set %v, internal set %v, Label %q",
			c.Skipped != nil, c.internal != nil, c.Label)
	}
}

func TestBindRefusesWhatIsNotAMethodShape(t *testing.T) {
	ref := bindRef(t)
	type bad struct {
		NoCtx    func(a int) (int, error)
		Variadic func(ctx context.Context, a ...int) error
		NoErr    func(ctx context.Context) int
		Three    func(ctx context.Context) (int, int, error)
		Chan     func(ctx context.Context, c chan int) error
		Empty    func(ctx context.Context) error `airnode:""`
		Good     func(ctx context.Context) error
	}
	var b bad
	err := ref.Bind(&b)
	if err == nil {
		t.Fatal("Bind of bad shapes: no error")
	}
	for _, want := range []string{
		"field NoCtx func(int) (int, error): the first parameter must be context.Context",
		"field Variadic func(context.Context, ...int) error: a variadic parameter cannot be sent",
		"field NoErr func(context.Context) int: the results must be (R, error) or error",
		"field Three",
		"field Chan func(context.Context, chan int) error: argument 0 is a chan int, which no codec can send",
		"field Empty: empty airnode tag",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Bind error lacks %q:\n%v", want, err)
		}
	}
	if b.Good != nil {
		t.Error("a failed Bind set a field; it must set nothing")
	}

	for _, c := range []struct {
		client any
		want   string
	}{
		{nil, "non-nil pointer to a struct of func fields, got <nil>"},
		{calcClient{}, "got kernel_test.calcClient"},
		{(*calcClient)(nil), "got *kernel_test.calcClient"},
		{new(int), "got *int"},
		{&struct{ Name string }{}, "no exported field of func type"},
	} {
		if err := ref.Bind(c.client); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Bind(%T) = %v; want an error containing %q", c.client, err, c.want)
		}
	}
}

// BenchmarkBind compares a bound stub's call with Call's, same provider,
// same connection (the stub's price is reflect.MakeFunc's).
func BenchmarkBind(b *testing.B) {
	ref := bindRef(b)
	ctx := context.Background()
	var c calcClient
	if err := ref.Bind(&c); err != nil {
		b.Fatal(err)
	}
	b.Run("Call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var sum int
			if err := ref.Call(ctx, "Add", []any{2, 3}, &sum); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stub", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Add(ctx, 2, 3); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Bind a struct of func fields to a reference and call the provider
// through them: a typed client without method names in strings.
func ExampleReference_Bind() {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	provider := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	defer provider.Close()
	exp, err := provider.Export(ctx, Greeter{}, spi.MustParse("airnode://127.0.0.1:0/example.Greeter"))
	if err != nil {
		panic(err)
	}
	consumer := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	defer consumer.Close()
	ref, err := consumer.Refer(ctx, spi.MustParse("airnode://"+exp.URL().Address()+"/example.Greeter"), spi.URL{})
	if err != nil {
		panic(err)
	}

	var greeter struct {
		Hello func(ctx context.Context, name string) (string, error)
		Greet func(ctx context.Context, name string) (string, error) `airnode:"Hello"`
	}
	if err := ref.Bind(&greeter); err != nil {
		panic(err)
	}
	greeting, err := greeter.Hello(ctx, "airnode")
	fmt.Println(greeting, err)
	greeting, err = greeter.Greet(ctx, "tags")
	fmt.Println(greeting, err)
	// Output:
	// hello, airnode <nil>
	// hello, tags <nil>
}
