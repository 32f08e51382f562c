package kernel

import (
	"context"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// tester82 #7: a consumer's timeout=3s cut to 300 ms by the provider's
// Sleep.timeout=300 (Dubbo's order: the method level first) timed out
// with no word of where the 300 ms came from. The error now names the
// provider's key and how to choose one's own; the precedence stays, a
// consumer's own method-level timeout wins and gets no such note.
func TestAX_TimeoutErrorNamesTheProvidersKey(t *testing.T) {
	reg := spi.MustParse("file://" + t.TempDir())
	t74Providers(t, reg, "timeout=2000&Sleep.timeout=300")
	for _, tc := range []struct{ consumer, want string }{
		{"timeout=3s", "(timeout 300ms: the provider's Sleep.timeout; give the reference its own Sleep.timeout, call -p Sleep.timeout=..., or the call its own timeout, a \"timeout\" attachment, call --timeout, to choose yours)"},
		{"", "(timeout 300ms: the provider's Sleep.timeout;"},
		{"timeout=3s&Sleep.timeout=150ms", ""},
	} {
		r := t74Refer(t, reg, "airnode:///t74.Svc?retries=0&"+tc.consumer, 1)
		var ms int
		err := r.Call(ctxT(t), "Sleep", []any{1000}, &ms)
		if spi.StatusOf(err) != spi.StatusServerTimeout {
			t.Fatalf("%s: err = %v, want SERVER_TIMEOUT", tc.consumer, err)
		}
		if tc.want == "" && strings.Contains(err.Error(), "the provider's") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.consumer, err, tc.want)
		}
		// the caller's own per-call timeout gets no note
		ctx := spi.WithAttachments(context.Background(), spi.AttachmentTimeout, "100ms")
		if err := r.Call(ctx, "Sleep", []any{1000}, &ms); err == nil || strings.Contains(err.Error(), "the provider's") {
			t.Errorf("%s with a timeout attachment: err = %v, want no note", tc.consumer, err)
		}
	}
}
