package spi_test

import (
	"testing"

	"github.com/airnode/airnode/spi"
)

// Redacted hides the token (also a method's) and the userinfo password,
// and keeps everything else, file paths included, as String writes it.
func TestURLRedacted(t *testing.T) {
	for in, want := range map[string]string{
		"airnode://127.0.0.1:20880/demo.Echo?token=s3cret&weight=5":            "airnode://127.0.0.1:20880/demo.Echo?token=***&weight=5",
		"airnode://h:1/demo.Echo?Echo.token=a%26b&tls.key=/k.pem&methods=Echo": "airnode://h:1/demo.Echo?Echo.token=***&methods=Echo&tls.key=%2Fk.pem",
		"zookeeper://alice:pa%3Ass@127.0.0.1:2181?session.timeout=5s":          "zookeeper://alice:***@127.0.0.1:2181?session.timeout=5s",
		"airnode://h:1/demo.Echo?token=&x=1":                                   "airnode://h:1/demo.Echo?token=&x=1",
		"airnode://h:1/demo.Echo?tokens=visible&x.tokenx=visible":              "airnode://h:1/demo.Echo?tokens=visible&x.tokenx=visible",
	} {
		u := spi.MustParse(in)
		if got := u.Redacted(); got != want {
			t.Errorf("Redacted(%s) = %s; want %s", in, got, want)
		}
		if u.String() != spi.MustParse(in).String() {
			t.Errorf("Redacted changed %s", in)
		}
	}
	if got := (spi.URL{}).Redacted(); got != "" {
		t.Errorf("zero URL Redacted = %q", got)
	}
}
