package kernel

import (
	"log/slog"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/internal/tlsconf/tlsconftest"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// A reference through a registry may give TLS keys without tls=true (the
// provider's published tls=true completes them); a direct URL may not,
// and an explicit tls=false with them stays an error. A bad pairing
// (tls.cert without tls.key) is caught either way, and so is a TLS file
// the consumer cannot read.
func TestCheckConsumerKeysLeavesTLSToTheProvider(t *testing.T) {
	cat := testCatalogs(t)
	ca := tlsconftest.NewCA(t, "test CA").CertFile
	for q, want := range map[string]string{
		"airnode:///demo.Echo?tls.ca=" + ca:                           "",
		"airnode:///demo.Echo?tls.servername=p.test":                  "",
		"airnode:///demo.Echo?transport=tcp&tls.ca=" + ca:             "",
		"airnode:///demo.Echo?tls=false&tls.ca=" + ca:                 "tls.ca is set but tls is not true",
		"airnode:///demo.Echo?tls.cert=/x/c.pem":                      "give both or neither",
		"airnode://127.0.0.1:1/demo.Echo?tls.ca=" + ca:                "tls.ca is set but tls is not true",
		"airnode://127.0.0.1:1/demo.Echo?tls=true&tls.ca=" + ca:       "",
		"airnode://127.0.0.1:1/demo.Echo?connections=65&tls.ca=/x/ca": `invalid value "65" for URL key "connections": want an integer from 1 to 64`,
		"airnode://127.0.0.1:1/demo.Echo?tls=true&tls.ca=/x/nope.pem": "tls.ca: open /x/nope.pem: no such file or directory",
		"airnode:///demo.Echo?tls.ca=/x/nope.pem":                     "tls.ca: open /x/nope.pem: no such file or directory",
		"airnode:///demo.Echo?tls.cert=/x/c.pem&tls.key=/x/k.pem":     "tls.cert: open /x/c.pem: no such file or directory",
	} {
		err := CheckConsumerKeys(cat, spi.MustParse(q))
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v; want %q", q, err, want)
		}
	}
}

// CheckProviderTLS refuses a provider publishing no tls=true only for a
// consumer that gives TLS keys without tls, naming the provider and the
// keys.
func TestCheckProviderTLS(t *testing.T) {
	for _, tc := range []struct{ consumer, provider, want string }{
		{"tls.ca=/ca.pem", "tls=true&transport=tcp", ""},
		{"tls.ca=/ca.pem&tls.servername=p.test", "transport=tcp",
			"the consumer gives tls.ca=/ca.pem, tls.servername=p.test but provider 127.0.0.1:7 publishes no tls=true (it serves in clear text): a consumer's TLS keys complete a provider's tls=true; set tls=true to require TLS, or remove tls.ca, tls.servername"},
		{"tls.ca=/ca.pem", "tls=false", "publishes no tls=true"},
		{"tls=true&tls.ca=/ca.pem", "", ""},  // the consumer's own choice: the handshake tells
		{"tls=false&tls.ca=/ca.pem", "", ""}, // the transport refuses it
		{"timeout=1s", "", ""},
	} {
		c := spi.MustParse("airnode:///demo.Echo?" + tc.consumer)
		merged := spi.MergeURL(spi.MustParse("airnode://127.0.0.1:7/demo.Echo?"+tc.provider), c)
		err := CheckProviderTLS(c, merged)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("consumer %s, provider %s: %v; want %q", tc.consumer, tc.provider, err, tc.want)
		}
	}
}

// Refer through a registry accepts a consumer's tls.ca without tls=true;
// a provider that publishes no tls=true is refused with a warning and an
// invoker that fails calls with the reason (CLIENT_ERROR, at once, no
// retry), not "no provider available".
func TestReferRefusesAClearTextProviderForTLSKeys(t *testing.T) {
	reg := spi.MustParse("memory://tlsmerge")
	cat := testCatalogs(t)
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0), WithRegistry(reg))
	defer p.Close()
	e, err := p.Export(ctxT(t), demo.New("p", 1), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	var logs logbuf.Buffer
	c := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithShutdownWait(0), WithRegistry(reg))
	defer c.Close()
	ca := tlsconftest.NewCA(t, "test CA").CertFile
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode:///demo.Echo?tls.ca="+ca), spi.URL{})
	if err != nil {
		t.Fatalf("Refer with tls.ca alone: %v", err)
	}
	addr := e.URL().Address()
	_, err = r.Invoke(ctxT(t), "Echo", "hi")
	want := "kernel: provider " + addr + ": the consumer gives tls.ca=" + ca + " but provider " + addr + " publishes no tls=true"
	if spi.StatusOf(err) != spi.StatusClientError || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "attempts") {
		t.Errorf("call = %v; want CLIENT_ERROR %q, one attempt", err, want)
	}
	if !strings.Contains(logs.String(), "its TLS does not fit the reference's keys") {
		t.Errorf("no warning; logs:\n%s", logs.String())
	}
	if len(r.Providers()) != 0 {
		t.Errorf("the refused provider is listed as available")
	}
}
