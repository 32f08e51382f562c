package kernel

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// A reference whose scheme is not a protocol airnode speaks is refused at
// Refer, naming the scheme and airnode, instead of answering every call
// SERVICE_NOT_FOUND "no provider available"; the scheme is
// case-insensitive, so AIRNODE:// calls the provider.
func TestReferRefusesAnUnknownProtocol(t *testing.T) {
	_, e := provider(t)
	addr := e.URL().Address()
	c := consumer(t)
	for _, tt := range []struct{ in, want string }{
		{"http://" + addr + "/demo.Echo", `kernel: refer demo.Echo: unknown protocol "http" (want airnode)`},
		{"dubbo://" + addr + "/demo.Echo", `kernel: refer demo.Echo: unknown protocol "dubbo" (want airnode)`},
		{"zookeeper:///demo.Echo", `kernel: refer demo.Echo: unknown protocol "zookeeper" (want airnode); "zookeeper" names a registry: refer to airnode:///demo.Echo and give the zookeeper:// URL as the registry URL`},
		{"direct://" + addr + "/demo.Echo", `kernel: refer demo.Echo: unknown protocol "direct" (want airnode); "direct" names a registry: for providers at that address write airnode://` + addr + `/demo.Echo`},
		{"airnode://" + addr + "/demo.Echo?protocol=dubbo", `kernel: refer demo.Echo: unknown protocol "dubbo" in URL key "protocol" (want airnode)`},
	} {
		_, err := c.Refer(ctxT(t), spi.MustParse(tt.in), spi.URL{})
		if err == nil || err.Error() != tt.want {
			t.Errorf("Refer(%s):\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
	for _, in := range []string{"AIRNODE://" + addr + "/demo.Echo", "Airnode://" + addr + "/demo.Echo?protocol=airnode"} {
		r := refer(t, c, in)
		if v, err := r.Invoke(ctxT(t), "Echo", "x"); err != nil || v != "x" {
			t.Errorf("%s: Echo = %v, %v", in, v, err)
		}
	}
}

// Userinfo on a reference is refused, saying what to use for a secret,
// rather than silently ignored; the password is not echoed.
func TestReferRefusesUserinfo(t *testing.T) {
	_, e := provider(t)
	_, err := consumer(t).Refer(ctxT(t), spi.MustParse("airnode://u:s3cret@"+e.URL().Address()+"/demo.Echo"), spi.URL{})
	want := `kernel: refer demo.Echo: user "u" before '@' in the URL: the airnode protocol has no login (for a provider's secret use the token filter: ?token=SECRET)`
	if err == nil || err.Error() != want {
		t.Fatalf("Refer: %v\nwant %s", err, want)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatal("the password is echoed")
	}
}

// Export refuses what Refer refuses: no consumer could refer to a service
// exported under another protocol, or with a login in its URL.
func TestExportRefusesAnUnknownProtocol(t *testing.T) {
	n, _ := provider(t)
	for _, tt := range []struct{ in, want string }{
		{"http://127.0.0.1:0/demo.Other", `kernel: export demo.Other: unknown protocol "http" (want airnode)`},
		{"airnode://127.0.0.1:0/demo.Other?protocol=dubbo", `kernel: export demo.Other: unknown protocol "dubbo" in URL key "protocol" (want airnode)`},
		{"airnode://u:pw@127.0.0.1:0/demo.Other", `kernel: export demo.Other: user "u" before '@' in the URL: the airnode protocol has no login (for a provider's secret use the token filter: ?token=SECRET)`},
	} {
		_, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Export(%s):\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
}
