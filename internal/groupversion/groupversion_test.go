package groupversion_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/groupversion"
	"github.com/airnode/airnode/spi"
)

func TestParseAndMatch(t *testing.T) {
	for _, c := range []struct {
		consumer string
		fits     []string // provider queries that fit
		misfits  []string
	}{
		{"", []string{""}, []string{"group=a", "version=1"}},
		{"group=a", []string{"group=a"}, []string{"", "group=b", "group=a&version=1"}},
		{"group=*", []string{"", "group=a", "group=b"}, []string{"group=a&version=1"}},
		{"group=a,%20b,a&version=*", []string{"group=a", "group=b&version=2"}, []string{"", "group=c"}},
		{"version=1,2", []string{"version=1", "version=2"}, []string{"", "version=3"}},
	} {
		m, err := groupversion.ForConsumer(spi.MustParse("airnode:///d.E?" + c.consumer))
		if err != nil {
			t.Fatalf("%q: %v", c.consumer, err)
		}
		for _, q := range c.fits {
			if !m.Match(spi.MustParse("airnode://h:1/d.E?" + q)) {
				t.Errorf("consumer %q: provider %q does not fit", c.consumer, q)
			}
		}
		for _, q := range c.misfits {
			if m.Match(spi.MustParse("airnode://h:1/d.E?" + q)) {
				t.Errorf("consumer %q: provider %q fits", c.consumer, q)
			}
		}
	}
	for v, want := range map[string]string{"a,,b": "an empty item", "a*": "is a pattern"} {
		if _, err := groupversion.Parse(spi.KeyGroup, v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want %q", v, err, want)
		}
	}
	s, _ := groupversion.Parse(spi.KeyGroup, "b,a")
	if !s.Multi() || s.Any() || strings.Join(s.Values(), ",") != "b,a" {
		t.Errorf("b,a: Multi %v Any %v Values %v", s.Multi(), s.Any(), s.Values())
	}
}
