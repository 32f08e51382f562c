package kernel

import (
	"fmt"
	"slices"
	"testing"

	"github.com/airnode/airnode/internal/suggest"
	"github.com/airnode/airnode/spi"
)

// tester79 #4: no real key is suggested for another real key: with every
// key airnode reads (the kernel's and every bundled extension's), a key
// given correctly never gets a did-you-mean from the rest of the list,
// so suggest's stem rule ("retry" for "retries") adds no noise.
func TestNoRealKeySuggestsAnother(t *testing.T) {
	known := slices.Compact(slices.Sorted(slices.Values(KnownKeys(testCatalogs(t)))))
	if len(known) < 40 {
		t.Fatalf("KnownKeys has %d keys, want the full list", len(known))
	}
	for i, k := range known {
		others := slices.Delete(slices.Clone(known), i, i+1)
		if got := suggest.Closest(k, others); got != "" {
			t.Errorf("Closest(%q, other real keys) = %q, want none", k, got)
		}
	}
}

// tester79 #4: "retry" on a reference gets the did-you-mean "retries" at
// Refer, as "timout" does, plain and per method.
func TestRetryTypoIsNamed(t *testing.T) {
	n := NewNode(testCatalogs(t), WithLogger(quiet))
	defer n.Close()
	got := fmt.Sprint(n.likelyTypos(spi.MustParse("airnode://h:1/shop.Inventory?retry=3&methods.Where.retry=1&time=2s")))
	if want := "[[methods.Where.retry methods.Where.retries] [retry retries] [time timeout]]"; got != want {
		t.Fatalf("likelyTypos = %s, want %s", got, want)
	}
}
