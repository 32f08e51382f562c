package kernel

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// tester82 #6: methods.Work.timeout=100ms beside Work.timeout=100 was
// refused as "different values"; the same duration in two spellings
// agrees, a different one is still refused, and so is a different
// spelling of a key that is no duration.
func TestAX_MethodFormsCompareDurationsAsDurations(t *testing.T) {
	cat := testCatalogs(t)
	for _, tc := range []struct {
		q       string
		refused bool
	}{
		{"methods.Who.timeout=100ms&Who.timeout=100", false},
		{"methods.Who.timeout=1s&Who.timeout=1000", false},
		{"methods.Who.timeout=100ms&Who.timeout=500ms", true},
		{"methods.Who.timeout=100ms&Who.timeout=500", true},
		{"methods.Who.retries=1&Who.retries=01", true},
	} {
		err := CheckConsumerKeys(cat, spi.MustParse("airnode://127.0.0.1:1/t.Who?"+tc.q))
		if refused := err != nil && strings.Contains(err.Error(), "set the same method key to different values"); refused != tc.refused {
			t.Errorf("%s: CheckConsumerKeys = %v, want refused %v", tc.q, err, tc.refused)
		}
		n := NewNode(cat, WithLogger(quiet))
		r, err := n.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/t.Who?"+tc.q), spi.URL{})
		if (err != nil) != tc.refused {
			t.Errorf("%s: Refer error %v, want refused %v", tc.q, err, tc.refused)
		}
		if err == nil {
			_ = r.Close()
		}
		n.Close()
	}
}
