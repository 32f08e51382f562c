package metrics_test

import (
	"context"
	"fmt"
	"os"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// A node registers NewBuilder's filter in its catalog and serves the
// registry's Handler (airnode serve --metrics ADDR does both).
func Example() {
	reg := metrics.NewRegistry()
	f, _ := metrics.NewBuilder(reg).Build(spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?side=provider"))
	next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:20880/demo.Echo"), nil)
	for range 3 {
		f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Echo"})
	}
	st, _ := reg.Lookup(spi.Provider, "demo.Echo", "Echo")
	fmt.Println(st.Count, st.SuccessRate)
	_ = metrics.WriteTable(os.Stdout, nil)
	// Output:
	// 3 1
	// SIDE  SERVICE  METHOD  COUNT  SUCCESS  MEAN  P99  TPS/10s  TPS/avg  IN-FLIGHT  CANCELLED  FAIL/10s  FAILURES
}
