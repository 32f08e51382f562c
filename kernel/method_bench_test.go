package kernel

import (
	"context"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
)

// BenchmarkMethodCall prices one provider method call (method.call) by
// reflection and directly, for demo.Echo's Echo (any -> any), Sleep (int ->
// int; 0 ms returns at once) and Payload (int -> []byte), and a method
// taking a pointer:
//
//	go test -run '^$' -bench MethodCall -benchmem ./kernel
func BenchmarkMethodCall(b *testing.B) {
	ctx := context.Background()
	cases := []struct {
		name, method string
		impl         any
		args         []any
	}{
		{"Echo", "Echo", demo.New("n", 100), []any{strings.Repeat("x", benchPayload)}},
		{"Sleep", "Sleep", demo.New("n", 100), []any{0}},
		{"Payload", "Payload", demo.New("n", 100), []any{16}},
		{"Ptr", "Ptr1", &shapes{}, []any{&shapeRec{Name: "a"}}},
	}
	for _, c := range cases {
		mt, err := newMethodTable(c.impl)
		if err != nil {
			b.Fatal(err)
		}
		m, err := mt.lookup("bench", c.method)
		if err != nil {
			b.Fatal(err)
		}
		if m.direct == nil {
			b.Fatalf("%s is not called directly", c.method)
		}
		for _, path := range []string{"reflect", "direct"} {
			b.Run(c.name+"/"+path, func(b *testing.B) {
				mm := *m
				if path == "reflect" {
					mm.direct = nil
				}
				b.ReportAllocs()
				defer reportCPU(b)()
				for b.Loop() {
					if r := mm.call(ctx, "bench", c.args); r.Err != nil {
						b.Fatal(r.Err)
					}
				}
			})
		}
	}
}
