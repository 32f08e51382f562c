package clusterkit

import (
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
