package kernel

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// Tester8 #10: a timeout that cannot work is refused at Refer saying why:
// too large (naming the maximum), negative, or shorter than a
// millisecond (it was "timed out after 0s" at the first call).
func TestTimeoutValueErrorsSayWhy(t *testing.T) {
	c := consumer(t)
	for _, tc := range []struct{ query, want string }{
		{"timeout=99999999999999", "at most 9223372036854 (milliseconds)"},
		{"timeout=-5", "positive"},
		{"methods.Sleep.timeout=-1s", "positive"},
		{"timeout=10us", "at least 1ms"},
		{"methods.Sleep.timeout=999us", "at least 1ms"},
	} {
		_, err := c.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/demo.Echo?methods=Sleep&"+tc.query), spi.URL{})
		key, _, _ := strings.Cut(tc.query, "=")
		if err == nil || !strings.Contains(err.Error(), `"`+key+`"`) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %s and saying %q", tc.query, err, key, tc.want)
		}
	}
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://127.0.0.1:1/demo.Echo?timeout=1ms"), spi.URL{})
	if err != nil {
		t.Fatalf("timeout=1ms: %v", err)
	}
	_ = r.Close()
}
