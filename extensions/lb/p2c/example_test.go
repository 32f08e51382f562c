package p2c_test

import (
	"fmt"
	"time"

	"github.com/airnode/airnode/extensions/lb/p2c"
)

// A slow round trip raises the estimate at once; fast ones bring it down
// over the decay's time constant; left alone it decays toward 0.
func ExamplePeakEWMA() {
	e := p2c.PeakEWMA{Decay: 10 * time.Second}
	e.Observe(0, time.Millisecond)
	e.Observe(time.Second, 30*time.Millisecond) // a peak
	v, _ := e.Value(time.Second)
	fmt.Println("after a 30ms call:", v)
	for s := 2; s <= 11; s++ { // ten seconds of 1 ms calls, one a second
		e.Observe(time.Duration(s)*time.Second, time.Millisecond)
	}
	v, _ = e.Value(11 * time.Second)
	fmt.Println("after 10s of 1ms calls:", v.Round(100*time.Microsecond))
	v, _ = e.Value(41 * time.Second)
	fmt.Println("30s later, no call:", v.Round(100*time.Microsecond))
	// Output:
	// after a 30ms call: 30ms
	// after 10s of 1ms calls: 11.7ms
	// 30s later, no call: 600µs
}
