package config_test

import (
	"testing"

	"github.com/airnode/airnode/spi"
)

func mustParse(t *testing.T, s string) spi.URL {
	t.Helper()
	u, err := spi.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
