package roundrobin_test

import (
	"fmt"

	"github.com/airnode/airnode/extensions/lb/roundrobin"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// Weights 5:1:1 give the smooth sequence A A B A C A A.
func Example() {
	lb, _ := roundrobin.Builder{}.Build(spi.MustParse("consumer://10.0.0.9/demo.Echo"))
	names := map[spi.Invoker]string{}
	var providers []spi.Invoker
	for i, w := range []string{"5", "1", "1"} {
		p := spitest.NewStubInvoker(spi.MustParse(fmt.Sprintf("airnode://10.0.0.%d:20880/demo.Echo?weight=%s", i+1, w)), nil)
		names[p] = string(rune('A' + i))
		providers = append(providers, p)
	}
	inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
	for range 7 {
		fmt.Print(names[lb.Select(providers, inv)], " ")
	}
	fmt.Println()
	// Output: A A B A C A A
}
