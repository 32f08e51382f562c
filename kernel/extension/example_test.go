package extension_test

import (
	"fmt"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/extension/extensiontest"
	"github.com/airnode/airnode/spi"
)

func ExamplePoint_Choose() {
	c := extensiontest.Catalogs()
	u := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?loadbalance=roundrobin&methods.Echo.loadbalance=random")
	for _, m := range []string{"", "Echo", "Sleep"} {
		s := c.LoadBalance.Choose(u, m)
		fmt.Printf("%q: %s (from %s)\n", m, s.Name, s.Source)
	}
	_, _, err := c.LoadBalance.Select(u.With("loadbalance", "rundrobin"), "")
	fmt.Println(err)
	// Output:
	// "": roundrobin (from loadbalance)
	// "Echo": random (from methods.Echo.loadbalance)
	// "Sleep": roundrobin (from loadbalance)
	// unknown loadbalance "rundrobin" (available: consistenthash, leastactive, random, roundrobin, shortestresponse); did you mean "roundrobin"?
}

func ExampleActivateFilters() {
	c := extensiontest.Catalogs()
	// Provider side: metrics (order -100) and token (key "token", order -50)
	// are activated; the filter list puts accesslog first and drops metrics.
	u := spi.MustParse("airnode://h/demo.Echo?token=secret&filter=accesslog,default,-metrics")
	chain, err := extension.ActivateFilters(c.Filter, u, spi.Provider, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range chain {
		fmt.Println(f.Name())
	}
	// Output:
	// accesslog
	// token
}
