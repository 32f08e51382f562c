package kernel

import (
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// TestRemoteInvokerStampsResultEnded (issue 9): the remote invoker's
// reading at a call's end travels up in Result.Ended, on a real call over
// loopback, so that the filters above it time the call without reading
// the clock again; on the same scale as spi.Mono.
func TestRemoteInvokerStampsResultEnded(t *testing.T) {
	_, addr := namedProvider(t, "p")
	c, _ := outlierConsumer(t)
	r := refer(t, c, "airnode://"+addr+"/t12.Who?timeout=5s")
	eventually(t, "provider connected", func() bool { return len(r.Providers()) == 1 })
	p := r.Providers()[0]
	for range 3 {
		before := spi.Mono()
		res := p.Invoke(ctxT(t), &spi.Invocation{Service: "t12.Who", Method: "Who"})
		after := spi.Mono()
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if res.Ended <= before || res.Ended > after {
			t.Fatalf("Result.Ended %v, want within the call [%v, %v]", res.Ended, before, after)
		}
		if d := spi.MonoTime(res.Ended); time.Since(d) < 0 || time.Since(d) > time.Second {
			t.Errorf("MonoTime(Ended) = %v, %v from now; want a moment ago", d, time.Since(d))
		}
	}
}
