package integration

import (
	"errors"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// A consumer whose token two providers refuse (real nodes on loopback, one
// direct reference to both, failover with retries=2 and idempotent=true,
// which retries even a call that may have run): each call fails
// BAD_REQUEST at once, saying the token was refused and never the token,
// and is not retried on the other provider: one refusal per call.
func TestToken_RefusedIsBadRequestAndNotRetried(t *testing.T) {
	var addrs []string
	for range 2 {
		e, err := newNode(t).Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?token=s3cret"))
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, e.URL().Address())
	}
	a, b := addrs[0], addrs[1]
	cn := newNode(t)
	ctx := ctxT(t)
	r := refer(t, cn, a+","+b, "token=guess1&retries=2&idempotent=true&loadbalance=roundrobin")
	before := counters.Access.TokenRejections.Load()
	const calls = 10
	for i := range calls {
		_, err := r.Invoke(ctx, "Echo", "hi")
		var e *spi.Error
		if !errors.As(err, &e) || e.Status != spi.StatusBadRequest || !errors.Is(err, spi.ErrBadRequest) ||
			!strings.Contains(err.Error(), "BAD_REQUEST: token: wrong token for demo.Echo.Echo from 127.0.0.1:") ||
			!strings.Contains(err.Error(), "refused, it is not the provider's token; the method did not run") {
			t.Fatalf("call %d: %v; want BAD_REQUEST token: wrong token ... refused", i, err)
		}
		if strings.Contains(err.Error(), "guess1") || strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("the error shows a token: %v", err)
		}
	}
	if n := counters.Access.TokenRejections.Load() - before; n != calls {
		t.Errorf("the providers refused %d calls for %d calls made; want %d (no retry on the other provider)", n, calls, calls)
	}
}
