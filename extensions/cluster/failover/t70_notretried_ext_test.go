package failover_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// Tester70 #1: with retries=2, a SERVER_TIMEOUT of a method not marked
// idempotent is tried once (the request reached the provider), and the
// error said nothing of failover or why. It says so now, naming the key
// that allows the retries; status and cause stay. An idempotent method
// is retried and gets no such note; nor does a failure no idempotent
// method would retry either (a business error), nor retries=0.
func TestT70_1_NotRetriedSaysWhy(t *testing.T) {
	timeout := spi.Errorf(spi.StatusServerTimeout, "exchange: call demo.Echo.Echo timed out")
	sent := &spi.Error{Status: spi.StatusChannelInactive, Message: "closed", Cause: spi.ErrRequestSent}
	for _, tc := range []struct {
		name, query string
		err         error
		note        bool
		calls       int64
	}{
		{"server timeout", "?retries=2", timeout, true, 1},
		{"channel closed after sending", "?retries=2", sent, true, 1},
		{"idempotent", "?retries=2&idempotent=true", timeout, false, 3},
		{"no retries", "?retries=0", timeout, false, 1},
		{"service error", "?retries=2", spi.Errorf(spi.StatusServiceError, "nope"), false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, dir, ps := setup(t, tc.query, fails(tc.err), fails(tc.err), fails(tc.err))
			res := c.Invoke(context.Background(), echo(), dir, firstLB{})
			n := calls(ps)
			if total := n[0] + n[1] + n[2]; total != tc.calls {
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
