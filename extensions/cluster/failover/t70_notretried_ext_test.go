package failover_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// Tester70 #1: with retries=2, a SERVER_TIMEOUT of a method not marked
// idempotent is tried once (the request reached the provider), and the
// error said nothing of failover or why. It says so now, naming the key
// that allows the retries; status and cause stay. An idempotent method
// is retried and gets no such note; nor does a failure no idempotent
// method would retry either (a business error), nor retries=0. Tester71
// #10: nor when no retry could have helped — the caller's deadline had
// passed, or only one provider is listed.
func TestT70_1_NotRetriedSaysWhy(t *testing.T) {
	timeout := spi.Errorf(spi.StatusServerTimeout, "exchange: call demo.Echo.Echo timed out")
	sent := &spi.Error{Status: spi.StatusChannelInactive, Message: "closed", Cause: spi.ErrRequestSent}
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	for _, tc := range []struct {
		name, query string
		ctx         context.Context
		providers   int
		err         error
		note        bool
		calls       int64
	}{
		{"server timeout", "?retries=2", nil, 3, timeout, true, 1},
		{"channel closed after sending", "?retries=2", nil, 3, sent, true, 1},
		{"idempotent", "?retries=2&idempotent=true", nil, 3, timeout, false, 3},
		{"no retries", "?retries=0", nil, 3, timeout, false, 1},
		{"service error", "?retries=2", nil, 3, spi.Errorf(spi.StatusServiceError, "nope"), false, 1},
		{"caller's deadline passed", "?retries=2", expired, 3, timeout, false, 1},
		{"one provider", "?retries=2", nil, 1, timeout, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fns := make([]func(context.Context, *spi.Invocation) spi.Result, tc.providers)
			for i := range fns {
				fns[i] = fails(tc.err)
			}
			c, dir, ps := setup(t, tc.query, fns...)
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			res := c.Invoke(ctx, echo(), dir, firstLB{})
			var total int64
			for _, n := range calls(ps) {
				total += n
			}
			if total != tc.calls {
				t.Fatalf("%d attempts, want %d", total, tc.calls)
			}
			has := res.Err != nil && strings.Contains(res.Err.Error(), "failover made none of its retries=2") &&
				strings.Contains(res.Err.Error(), "idempotent=true")
			if has != tc.note {
				t.Fatalf("error %v: note %v, want %v", res.Err, has, tc.note)
			}
			if spi.StatusOf(res.Err) != spi.StatusOf(tc.err) || !errors.Is(res.Err, tc.err) {
				t.Fatalf("error %v: status %v, want %v and the cause kept", res.Err, spi.StatusOf(res.Err), spi.StatusOf(tc.err))
			}
		})
	}
}
