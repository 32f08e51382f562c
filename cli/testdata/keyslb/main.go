// Command keyslb is a test load-balancer plugin ("keyslb", picking as
// p2c does) that declares the URL keys its arguments name, each
// "key:type:default" ("timeout:int:5"), so that plugin check's test can
// declare keys the kernel reads; an enum's values follow, '|'-separated
// ("keyslb.mode:enum:normal:normal|panic").
package main

import (
	"os"
	"strings"

	"github.com/airnode/airnode/examples/p2c"
	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/spi"
)

type builder struct{ keys []spi.KeyDoc }

func (builder) Name() string                           { return "keyslb" }
func (builder) Build(spi.URL) (spi.LoadBalance, error) { return p2c.Balancer{}, nil }
func (b builder) Keys() []spi.KeyDoc                   { return b.keys }

func main() {
	var b builder
	for _, a := range os.Args[1:] {
		f := strings.SplitN(a, ":", 4)
		if len(f) >= 3 {
			d := spi.KeyDoc{Key: f[0], Type: f[1], Default: f[2], Doc: "declared by the test"}
			if len(f) == 4 {
				d.Values = strings.Split(f[3], "|")
			}
			b.keys = append(b.keys, d)
		}
	}
	sdk.Serve(sdk.Plugins{LoadBalance: b})
}
