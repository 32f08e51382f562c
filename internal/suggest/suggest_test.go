package suggest_test

import (
	"testing"

	"github.com/airnode/airnode/internal/suggest"
)

func TestClosest(t *testing.T) {
	known := []string{"backup", "connect.timeout", "file.cache", "root", "session.timeout"}
	for name, want := range map[string]string{
		"sesion.timeout": "session.timeout",
		"conect.timeout": "connect.timeout",
		"rot":            "root",
		"zzzzzzz":        "",
		"path":           "",
		"colour":         "",
		"rooot":          "root",
	} {
		if got := suggest.Closest(name, known); got != want {
			t.Errorf("Closest(%q) = %q, want %q", name, got, want)
		}
	}
	if d := suggest.EditDistance("kitten", "sitting"); d != 3 {
		t.Errorf("EditDistance(kitten, sitting) = %d, want 3", d)
	}
}
