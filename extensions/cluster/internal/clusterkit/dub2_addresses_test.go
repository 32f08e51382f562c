package clusterkit

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// Addresses names each provider once, in the order first tried, with its
// count when it took several attempts (tester35 finding 8e: "3 attempts
// on [A, A, A]").
func TestDub2_AddressesCountsRepeats(t *testing.T) {
	a := spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.1:20880/demo.Echo"), nil)
	b := spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.2:20880/demo.Echo"), nil)
	for _, tc := range []struct {
		tried []spi.Invoker
		want  string
	}{
		{nil, "[]"},
		{[]spi.Invoker{a}, "[10.0.0.1:20880]"},
		{[]spi.Invoker{a, b}, "[10.0.0.1:20880, 10.0.0.2:20880]"},
		{[]spi.Invoker{a, a, a}, "[10.0.0.1:20880 (3 times)]"},
		{[]spi.Invoker{a, b, b}, "[10.0.0.1:20880, 10.0.0.2:20880 (2 times)]"},
		{[]spi.Invoker{b, a, b, a, b}, "[10.0.0.2:20880 (3 times), 10.0.0.1:20880 (2 times)]"},
	} {
		if got := Addresses(tc.tried); got != tc.want {
			t.Errorf("Addresses = %s, want %s", got, tc.want)
		}
	}
}

// FailureLines lists each call under its noun, and more than
// MaxFailureLines as the first and last five with the count left out
// (aa #4: forking's forks as failover's attempts).
func TestAA_FailureLinesNamesEachCall(t *testing.T) {
	a := spitest.NewStubInvoker(spi.MustParse("airnode://10.0.0.1:20880/demo.Echo"), nil)
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
	tried, errs := make([]spi.Invoker, 12), make([]error, 12)
	for i := range tried {
		tried[i], errs[i] = a, spi.Errorf(spi.StatusServerError, "demo.Echo.Echo: boom %d", i+1)
	}
	got := FailureLines(inv, "forking: head", "fork", tried[:2], errs[:2])
	if want := "forking: head:\n  fork 1, 10.0.0.1:20880: SERVER_ERROR: boom 1\n  fork 2, 10.0.0.1:20880: SERVER_ERROR: boom 2"; got != want {
		t.Errorf("two forks:\n%s\nwant\n%s", got, want)
	}
	lines := strings.Split(FailureLines(inv, "h", "fork", tried, errs), "\n")
	if len(lines) != 12 || lines[6] != "  ... 2 forks not shown" || lines[5] != "  fork 5, 10.0.0.1:20880: SERVER_ERROR: boom 5" || lines[7] != "  fork 8, 10.0.0.1:20880: SERVER_ERROR: boom 8" {
		t.Errorf("12 forks:\n%s", strings.Join(lines, "\n"))
	}
	// tester79 #7: the name inside a sentence is not cut
	panicked := []error{spi.Errorf(spi.StatusServerError, "panic in demo.Echo.Echo: boom in Echo")}
	if got, want := FailureLines(inv, "h", "attempt", tried[:1], panicked), "h:\n  attempt 1, 10.0.0.1:20880: SERVER_ERROR: panic in demo.Echo.Echo: boom in Echo"; got != want {
		t.Errorf("a panic's text:\n%s\nwant\n%s", got, want)
	}
	if Count(1, "fork") != "1 fork" || Count(3, "attempt") != "3 attempts" {
		t.Errorf("Count: %q, %q", Count(1, "fork"), Count(3, "attempt"))
	}
}
