package spi_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/airnode/airnode/spi"
)

// Tester19 finding 8: MarkSecretKey makes a key secret for the process,
// at service and method level, safely while other goroutines redact.
func TestT19_8_MarkSecretKeyHidesTheKeyConcurrently(t *testing.T) {
	u := spi.MustParse("airnode://h:1/demo.Echo?t19s0=a&Echo.t19s1=b&t19s1x=visible&x=1")
	if got := u.Redacted(); strings.Contains(got, "***") {
		t.Fatalf("redacted before any mark: %s", got)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			spi.MarkSecretKey(fmt.Sprintf("t19s%d", i))
			spi.MarkSecretKey("t19s0")
		}()
		go func() {
			defer wg.Done()
			for range 100 {
				_ = u.Redacted()
				_ = spi.IsSecretKey("Echo.t19s1")
			}
		}()
	}
	wg.Wait()
	spi.MarkSecretKey("")
	want := "airnode://h:1/demo.Echo?Echo.t19s1=***&t19s0=***&t19s1x=visible&x=1"
	if got := u.Redacted(); got != want {
		t.Errorf("Redacted = %s; want %s", got, want)
	}
	keys := spi.SecretKeys()
	n := 0
	for _, k := range keys {
		if strings.HasPrefix(k, "t19s") {
			n++
		}
	}
	if n != 8 || slices.Contains(keys, "") || slices.Contains(keys, spi.AttachmentToken) {
		t.Errorf("SecretKeys = %v; want t19s0..t19s7 once each", keys)
	}
	if spi.IsSecretKey("s0") || spi.IsSecretKey("xt19s0") || !spi.IsSecretKey("a.b.t19s0") {
		t.Error("a marked key matches only itself or a dotted suffix")
	}
}
