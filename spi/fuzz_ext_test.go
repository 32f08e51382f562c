package spi_test

import (
	"testing"

	"github.com/airnode/airnode/spi"
)

// FuzzParse checks that whatever Parse accepts renders canonically: the
// rendering parses back to an equal URL and renders identically.
// Seeds live in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"airnode://127.0.0.1:20880/demo.Echo?loadbalance=roundrobin&methods.Echo.loadbalance=random",
		"airnode://[::1]:20880/demo.Echo",
		"zookeeper://u:p%40ss@zk1:2181,zk2:2182/airnode?backup=zk3:2184",
		"file:///tmp/reg",
		"airnode://h/x?token=&k=%25&sp=a+b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := spi.Parse(s)
		if err != nil {
			return
		}
		s1 := u.String()
		v, err := spi.Parse(s1)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its String %q does not parse: %v", s, s1, err)
		}
		if !v.Equal(u) {
			t.Fatalf("Parse(String()) differs:\n in  %q\n out %q\n u %#v\n v %#v", s, s1, u, v)
		}
		if s2 := v.String(); s2 != s1 {
			t.Fatalf("String not stable: %q -> %q", s1, s2)
		}
	})
}
