package metrics_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/filter/metrics"
)

// Provider requests rejected before any service (counted by the kernel in
// ProviderRejections) are one Prometheus family with a status label only,
// in the /stats counters, and a line under the text table.
func TestRejectedRequestsAreExported(t *testing.T) {
	snf0, bad0 := metrics.ProviderRejections.ServiceNotFound.Load(), metrics.ProviderRejections.BadRequest.Load()
	metrics.ProviderRejections.ServiceNotFound.Add(3)
	metrics.ProviderRejections.BadRequest.Add(2)
	snf, bad := strconv.FormatUint(snf0+3, 10), strconv.FormatUint(bad0+2, 10)

	srv, err := metrics.Listen("127.0.0.1:0", metrics.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	get := func(path string) string {
		t.Helper()
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := client.Get("http://" + srv.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	prom := get("/metrics")
	for _, want := range []string{
		`airnode_provider_rejected_total{status="SERVICE_NOT_FOUND"} ` + snf + "\n",
		`airnode_provider_rejected_total{status="BAD_REQUEST"} ` + bad + "\n",
	} {
		if !strings.Contains(prom, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	want := "provider requests rejected before the service: SERVICE_NOT_FOUND " + snf + ", BAD_REQUEST " + bad
	if text := get("/stats?format=text"); !strings.Contains(text, want) {
		t.Errorf("/stats?format=text lacks %q:\n%s", want, text)
	}
	if js := get("/stats"); !strings.Contains(js, `"provider.service_not_found": `+snf) || !strings.Contains(js, `"provider.bad_request": `+bad) {
		t.Errorf("/stats counters lack the rejected requests:\n%s", js)
	}
}

func TestWriteRejected(t *testing.T) {
	for _, c := range []struct {
		counters map[string]uint64
		want     string
	}{
		{nil, ""},
		{map[string]uint64{"provider.service_not_found": 0, "provider.bad_request": 0}, ""},
		{map[string]uint64{"provider.bad_request": 4}, "provider requests rejected before the service: BAD_REQUEST 4\n"},
		{map[string]uint64{"provider.service_not_found": 1, "provider.bad_request": 2}, "provider requests rejected before the service: SERVICE_NOT_FOUND 1, BAD_REQUEST 2\n"},
		{map[string]uint64{"access.token_rejections": 3}, "provider requests rejected before the service: wrong or missing token 3\n"},
		{map[string]uint64{"provider.bad_request": 2, "access.token_rejections": 1}, "provider requests rejected before the service: BAD_REQUEST 2, wrong or missing token 1\n"},
		// nu50 finding 3: every reason of a refused TLS handshake, summed
		{map[string]uint64{"access.token_rejections": 1, "tls.handshake_failures_client_names": 2, "tls.handshake_failures_hung_up": 3},
			"provider requests rejected before the service: wrong or missing token 1, refused at the TLS handshake 5\n"},
		{map[string]uint64{"tls.handshake_failures_other": 1}, "provider requests rejected before the service: refused at the TLS handshake 1\n"},
	} {
		var b bytes.Buffer
		if err := metrics.WriteRejected(&b, c.counters); err != nil || b.String() != c.want {
			t.Errorf("WriteRejected(%v) = %q, %v; want %q", c.counters, b.String(), err, c.want)
		}
	}
}
