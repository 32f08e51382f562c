package kernel

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// A direct call to a service the address does not export names the
// services exported there (the first 10, then "and N more") and the one
// meant when one is close; a call to a method the service lacks names
// the one meant when it differs only in case (Go method, generic
// invoker with its "methods" list).
func TestNotFoundNamesWhatIsThere(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer n.Close()
	e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Shapes"))
	if err != nil {
		t.Fatal(err)
	}
	addr := e.URL().Address()
	if _, err := n.ExportInvoker(ctxT(t), spi.MustParse("airnode://"+addr+"/demo.Calc?methods=Add,Div"),
		spi.InvokerFunc(func(context.Context, *spi.Invocation) spi.Result { return spi.Result{Value: 1} })); err != nil {
		t.Fatal(err)
	}
	c := consumer(t)
	call := func(service, method string) error {
		t.Helper()
		r := refer(t, c, "airnode://"+addr+"/"+service)
		defer r.Close()
		_, err := r.Invoke(ctxT(t), method, "x")
		if spi.StatusOf(err) != spi.StatusServiceNotFound {
			t.Fatalf("%s.%s: %v; want SERVICE_NOT_FOUND", service, method, err)
		}
		return err
	}
	for _, tc := range []struct{ service, method, want string }{
		{"demo.Shape", "Echo", `SERVICE_NOT_FOUND: service "demo.Shape" is not exported on ` + addr +
			` (exported here: demo.Calc, demo.Shapes); did you mean "demo.Shapes"?`},
		{"demo.calc", "Add", `service "demo.calc" is not exported on ` + addr + ` (exported here: demo.Calc, demo.Shapes); did you mean "demo.Calc"?`},
		{"acme.Nothing", "Add", `service "acme.Nothing" is not exported on ` + addr + ` (exported here: demo.Calc, demo.Shapes)`},
		{"demo.Shapes", "echo", `service "demo.Shapes" has no method "echo" (methods: Echo, Fail, Info, Payload, Sleep); did you mean "Echo"?`},
		{"demo.Shapes", "Nope", `service "demo.Shapes" has no method "Nope" (methods: Echo, Fail, Info, Payload, Sleep)`},
		{"demo.Calc", "add", `service "demo.Calc" has no method "add" (methods: Add, Div); did you mean "Add"?`},
		// fix-co #3: a service and its method in another order
		{"Shapes.demo", "Echo", `service "Shapes.demo" is not exported on ` + addr + ` (exported here: demo.Calc, demo.Shapes); did you mean service "demo.Shapes", method "Echo"?`},
		{"Echo", "demo.Shapes", `service "Echo" is not exported on ` + addr + ` (exported here: demo.Calc, demo.Shapes); did you mean service "demo.Shapes", method "Echo"?`},
		{"Sleep.demo.Shapes", "x", `service "Sleep.demo.Shapes" is not exported on ` + addr + ` (exported here: demo.Calc, demo.Shapes); did you mean service "demo.Shapes", method "Sleep"?`},
		{"Calc.demo", "Div", `service "Calc.demo" is not exported on ` + addr + ` (exported here: demo.Calc, demo.Shapes); did you mean service "demo.Calc", method "Div"?`},
		{"Shapes.demo", "Nope", `service "Shapes.demo" is not exported on ` + addr + ` (exported here: demo.Calc, demo.Shapes)`},
		{"Nope", "demo.Shapes", `service "Nope" is not exported on ` + addr + ` (exported here: demo.Calc, demo.Shapes)`},
	} {
		err := call(tc.service, tc.method)
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s.%s: %v\nwant %q", tc.service, tc.method, err, tc.want)
		}
		if !strings.Contains(tc.want, "did you mean") && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%s.%s: %v; want no suggestion", tc.service, tc.method, err)
		}
	}

	// 13 services: ten named, sorted, and the rest counted.
	for i := range 11 {
		if _, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse(fmt.Sprintf("airnode://%s/z.S%02d", addr, i))); err != nil {
			t.Fatal(err)
		}
	}
	want := `service "demo.Shape" is not exported on ` + addr +
		` (exported here: demo.Calc, demo.Shapes, z.S00, z.S01, z.S02, z.S03, z.S04, z.S05, z.S06, z.S07 and 3 more); did you mean "demo.Shapes"?`
	if err := call("demo.Shape", "Echo"); !strings.Contains(err.Error(), want) {
		t.Errorf("13 services: %v\nwant %q", err, want)
	}

	// Another group or version of the interface is the hint, alone.
	if _, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://"+addr+"/demo.Echo?version=2.0")); err != nil {
		t.Fatal(err)
	}
	want = `service "demo.Echo" is not exported on ` + addr + ` (exported here in another group or version: demo.Echo:2.0)`
	if err := call("demo.Echo", "Echo"); !strings.HasSuffix(err.Error(), want) {
		t.Errorf("other version: %v\nwant %q", err, want)
	}
}
