package kernel

import (
	"errors"
	"testing"

	"github.com/airnode/airnode/spi"
)

// fix-cc: a connection key out of its bounds (connections=100,
// connect.timeout=0, reconnect.backoff=1h) was a plain error, which the
// CLI could not tell from any other refusal: -p connections=100 exited 1
// where -p connections=abc exited 2. Each is now an *spi.ParamError
// naming the key, the value as written and what is allowed, as a
// malformed one is.
func TestCC_ConnKeyOutOfBoundsIsAParamError(t *testing.T) {
	for q, want := range map[string]spi.ParamError{
		"connections=100":      {Key: "connections", Value: "100", Want: "an integer from 1 to 64"},
		"connections=0":        {Key: "connections", Value: "0", Want: "an integer from 1 to 64"},
		"connections=abc":      {Key: "connections", Value: "abc", Want: "an integer from 1 to 64"},
		"connect.timeout=0":    {Key: "connect.timeout", Value: "0", Want: "a duration more than 0, such as 3s"},
		"reconnect.backoff=1h": {Key: "reconnect.backoff", Value: "1h", Want: "a duration more than 0 and at most 30s, such as 100ms"},
		"reconnect.backoff=0":  {Key: "reconnect.backoff", Value: "0", Want: "a duration more than 0 and at most 30s, such as 100ms"},
	} {
		_, err := readConnSettings(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?" + q))
		pe, ok := errors.AsType[*spi.ParamError](err)
		if !ok || *pe != want {
			t.Errorf("%s: %v; want %v", q, err, &want)
		}
	}
	if _, err := readConnSettings(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?connections=64&connect.timeout=1ms&reconnect.backoff=30s")); err != nil {
		t.Errorf("the bounds themselves: %v", err)
	}
}

// fix-cc: beside an unknown cluster (cluster=failovr, which Refer
// refuses) Refer warned that retries is "read by another cluster, not
// the one this reference uses", before its refusal: a cluster that does
// not exist reads nothing we know of, so there is nothing to warn of.
// A known cluster that does not read the key is still warned of.
func TestCC_NoUnreadKeyWarningBesideAnUnknownExtension(t *testing.T) {
	n := consumer(t)
	kinds := func(q string) []string {
		ws, err := n.ReferWarnings(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?" + q))
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, w := range ws {
			out = append(out, w.Kind+" "+w.Key)
		}
		return out
	}
	for _, q := range []string{"cluster=failovr&retries=3", "methods.Echo.cluster=failovr&retries=3", "loadbalance=rundrobin&hash.nodes=10", "heartbeat=dul&heartbeat.retries=3"} {
		if ws := kinds(q); len(ws) != 0 {
			t.Errorf("%s: warned of %q; want nothing beside the unknown extension", q, ws)
		}
	}
	for q, want := range map[string]string{
		"cluster=failfast&retries=3":         "cluster retries",
		"loadbalance=random&hash.nodes=10":   "loadbalance hash.nodes",
		"heartbeat=dual&heartbeat.retries=3": "heartbeat heartbeat.retries",
	} {
		if ws := kinds(q); len(ws) != 1 || ws[0] != want {
			t.Errorf("%s: warned of %q; want %q", q, ws, want)
		}
	}
}
