package spi_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// A fragment is refused, naming it and the %23 spelling, instead of ending
// up in the service name ("demo.Echo#frag") or a parameter value.
func TestURLFragmentIsRefused(t *testing.T) {
	for _, in := range []string{
		"airnode://127.0.0.1:20880/demo.Echo#frag",
		"airnode://127.0.0.1:20880/demo.Echo?timeout=2s#frag",
		"airnode:///demo.Echo#",
		"zookeeper://127.0.0.1:2181#x",
	} {
		_, err := spi.Parse(in)
		if err == nil || !strings.Contains(err.Error(), "fragment") || !strings.Contains(err.Error(), "%23") {
			t.Errorf("Parse(%q) = %v, want an error naming the fragment and %%23", in, err)
		}
	}
	// A '#' that belongs to the path or a value is written %23, and a
	// registry node name (the percent-encoded String) decodes back to the
	// same URL.
	u := spi.MustParse("airnode://127.0.0.1:20880/a%23b?k=x%23y")
	if u.Path() != "a#b" || u.ParamOr("k", "") != "x#y" {
		t.Fatalf("path %q, k %q", u.Path(), u.ParamOr("k", ""))
	}
	node := url.QueryEscape(u.String())
	raw, err := url.QueryUnescape(node)
	if err != nil {
		t.Fatal(err)
	}
	if back, err := spi.Parse(raw); err != nil || !back.Equal(u) {
		t.Fatalf("registry node name %q: %v, %v", node, back, err)
	}
}

// Schemes are case-insensitive (RFC 3986 §3.1) and kept in lower case.
func TestURLSchemeIsCaseInsensitive(t *testing.T) {
	u, err := spi.Parse("AIRNODE://127.0.0.1:20880/demo.Echo")
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme() != "airnode" || u.String() != "airnode://127.0.0.1:20880/demo.Echo" {
		t.Fatalf("scheme %q, String %q", u.Scheme(), u.String())
	}
	if !u.Equal(spi.MustParse("airnode://127.0.0.1:20880/demo.Echo")) {
		t.Fatal("AIRNODE:// and airnode:// differ")
	}
	n, err := spi.NewURL("ZooKeeper", "127.0.0.1", 2181, "", nil)
	if err != nil || n.Scheme() != "zookeeper" {
		t.Fatalf("NewURL: %v, %v", n, err)
	}
	if s := u.WithScheme("Consumer").Scheme(); s != "consumer" {
		t.Fatalf("WithScheme: %q", s)
	}
}

// Userinfo stays part of the URL model: the ZooKeeper registry reads it for
// its digest ACL (a service reference refuses it: see kernel.Refer).
func TestURLUserinfoIsKeptForRegistries(t *testing.T) {
	u := spi.MustParse("zookeeper://digest:s%40cret@127.0.0.1:2181")
	if u.User() != "digest" || u.Password() != "s@cret" {
		t.Fatalf("user %q password %q", u.User(), u.Password())
	}
}

// CheckBackup names a backup entry that is not host:port (Addresses skips
// it, so a registry would silently leave that server out).
func TestURLCheckBackup(t *testing.T) {
	for in, want := range map[string]string{
		"zookeeper://h1:2181":                        "",
		"zookeeper://h1:2181?backup=h2:2181,h3:2181": "",
		"zookeeper://h1:2181?backup=h2:2l81":         `URL key "backup": "h2:2l81" is not host:port (want backup=h2:2181,h3:2181)`,
		"zookeeper://h1:2181?backup=h2:2181,,h3:1":   `URL key "backup": "" is not host:port (want backup=h2:2181,h3:2181)`,
	} {
		err := spi.MustParse(in).CheckBackup()
		if got := fmt.Sprint(err); (want == "" && err != nil) || (want != "" && got != want) {
			t.Errorf("CheckBackup(%s) = %v, want %q", in, err, want)
		}
	}
}
