package spi_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// TestDY_UnbracketedIPv6SuggestsThePortTyped (tester104 #4): the error of
// an IPv6 host without brackets shows the address and port typed in
// brackets, not always [::1]:20880; when the text reads both as an address
// with a port and as an address alone, it shows both.
func TestDY_UnbracketedIPv6SuggestsThePortTyped(t *testing.T) {
	for raw, want := range map[string]string{
		"airnode://::1:44121/demo.Echo":     `url: IPv6 address "::1:44121" must be in brackets, e.g. [::1]:44121`,
		"airnode://fe80::1:20881/demo.Echo": `url: IPv6 address "fe80::1:20881" must be in brackets, e.g. [fe80::1]:20881`,
		"airnode://::1:8080/demo.Echo":      `url: IPv6 address "::1:8080" must be in brackets, e.g. [::1]:8080 or [::1:8080]:20880`,
		"airnode://fe80::1/demo.Echo":       `url: IPv6 address "fe80::1" must be in brackets, e.g. [fe80::1]:20880`,
		"airnode://a:b:c/demo.Echo":         `url: IPv6 address "a:b:c" must be in brackets, e.g. [::1]:20880`,
	} {
		_, err := spi.Parse(raw)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v; want an error with %q", raw, err, want)
		}
	}
}
