package warmup_test

import (
	"fmt"

	"github.com/airnode/airnode/extensions/lb/warmup"
)

// A provider with weight 100 and a 10-minute warm-up, by uptime.
func ExampleEffective() {
	const minute = 60_000 // ms
	for _, up := range []int64{-5 * minute, 0, minute, 5 * minute, 10 * minute, 1<<32 + 5*minute} {
		fmt.Println(warmup.Effective(100, 10*minute, up))
	}
	// Output:
	// 1
	// 1
	// 10
	// 50
	// 100
	// 100
}
