package integration

import (
	"errors"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// tester35 finding 8b: a refusal at executes or threads counts the
// running calls in English, "1 call", "2 calls" (was "1 calls"). A real
// provider on loopback; limit + 1 concurrent Sleep(400) calls through a
// failfast reference: one is refused, with that message.
func TestDub1_RefusalCountsCallsInEnglish(t *testing.T) {
	for _, c := range []struct{ q, want string }{
		{"executes=1", "executelimit: demo.Echo.Sleep already runs 1 call (executes=1); call refused"},
		{"executes=2", "executelimit: demo.Echo.Sleep already runs 2 calls (executes=2); call refused"},
		{"threads=1", "threadlimit: provider ADDR already runs 1 call (threads=1); demo.Echo.Sleep refused"},
		{"threads=2", "threadlimit: provider ADDR already runs 2 calls (threads=2); demo.Echo.Sleep refused"},
	} {
		// port 0: a fixed port can be another test's ephemeral port (CI:
		// "bind: address already in use" on 39082)
		exp, err := newNode(t).Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?"+c.q))
		if err != nil {
			t.Fatal(err)
		}
		addr := exp.URL().Address()
		r := refer(t, newNode(t), addr, "timeout=5s&cluster=failfast")
		limit := int(c.q[len(c.q)-1] - '0')
		errs := make(chan error, limit+1)
		for range limit + 1 {
			go func() { _, err := r.Invoke(ctxT(t), "Sleep", 400); errs <- err }()
		}
		var refused []error
		for range limit + 1 {
			if err := <-errs; err != nil {
				refused = append(refused, err)
			}
		}
		want := strings.Replace(c.want, "ADDR", addr, 1)
		if len(refused) != 1 || !errors.Is(refused[0], spi.ErrServerThreadpoolExhausted) || !strings.HasSuffix(refused[0].Error(), want) {
			t.Errorf("%s: errors %v, want one ending %q", c.q, refused, want)
		}
	}
}
