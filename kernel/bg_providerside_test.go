package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// fix-bg (fix-bf leftover): a reference ignored executes=abc with a
// warning naming the malformed value, but refused its method-level form
// (methods.Who.executes=-1, Dubbo's Who.executes=abc) as a malformed
// consumer key. A key only providers read is ignored with that warning
// at either level; a consumer key's malformed method-level value is
// still refused, and a provider's executes still checked at Export.
func TestBG_MalformedProviderSideKeyIsWarnedAtEveryLevel(t *testing.T) {
	for _, tc := range []struct{ key, value string }{
		{"executes", "abc"},
		{"methods.Who.executes", "-1"},
		{"Who.executes", "abc"},
		{"methods.Who.threads", "x"},
	} {
		var logs syncBuffer
		n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownWait(0))
		u := spi.MustParse("airnode://127.0.0.1:1/t.Who").With(tc.key, tc.value)
		warns, err := n.ReferWarnings(u)
		if err != nil {
			t.Fatalf("%s=%s: ReferWarnings: %v", tc.key, tc.value, err)
		}
		var invalid string
		for _, w := range warns {
			if w.Kind == "providerside" && w.Key == tc.key {
				invalid = w.Invalid
			}
		}
		if invalid == "" {
			t.Errorf("%s=%s: ReferWarnings = %+v; want a providerside warning with Invalid set", tc.key, tc.value, warns)
		}
		r, err := n.Refer(ctxT(t), u, spi.URL{})
		if err != nil {
			t.Errorf("%s=%s: Refer refused a key a reference ignores: %v", tc.key, tc.value, err)
		} else {
			_ = r.Close()
		}
		if out := logs.String(); !strings.Contains(out, "key="+tc.key+" value="+tc.value+` invalid="want `) {
			t.Errorf("%s=%s: Refer's log lacks the warning naming the malformed value:\n%s", tc.key, tc.value, out)
		}
		if err := CheckConsumerKeys(testCatalogs(t), u); err != nil {
			t.Errorf("%s=%s: CheckConsumerKeys: %v; want nil (list --explain calls it)", tc.key, tc.value, err)
		}
		n.Close()
	}
	// a consumer key's malformed method-level value is still refused
	n := NewNode(testCatalogs(t), WithShutdownWait(0))
	defer n.Close()
	if _, err := n.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/t.Who?methods.Who.actives=-1"), spi.URL{}); err == nil ||
		!strings.Contains(err.Error(), `"methods.Who.actives"`) {
		t.Errorf("methods.Who.actives=-1: Refer: %v; want it refused", err)
	}
	// and a provider's method-level executes at Export
	if err := checkMethodValues(spi.MustParse("airnode://127.0.0.1:1/t.Who?methods.Who.executes=-1"), nil); err == nil {
		t.Error("checkMethodValues of a provider URL with methods.Who.executes=-1: nil; want the error")
	}
}
