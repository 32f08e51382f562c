package file_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/extensions/registry/file/filetest"
	"github.com/airnode/airnode/spi"
)

// TestFix35_ServicesWithInvalid: a service whose providers are all
// invalid entries is no service of Services (a reference has nothing to
// call there), but ServicesWithInvalid names it apart, for registry ls;
// a service with an empty providers directory is in neither.
func TestFix35_ServicesWithInvalid(t *testing.T) {
	r, regDir, _ := loggedRegistry(t, "", spi.MustParse("airnode://127.0.0.1:37012/demo.Echo?side=provider"))
	for _, svc := range []string{"only.Bad", "empty.Svc"} {
		if err := os.MkdirAll(filepath.Join(regDir, svc, file.Providers), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	filetest.JunkEntries(t, filepath.Join(regDir, "only.Bad", file.Providers), "only.Bad")
	keys, err := r.Services(context.Background())
	if err != nil || !slices.Equal(keys, []string{"demo.Echo"}) {
		t.Errorf("Services: %v, %v; want [demo.Echo]", keys, err)
	}
	keys, invalidOnly, err := r.(*file.Registry).ServicesWithInvalid(context.Background())
	if err != nil || !slices.Equal(keys, []string{"demo.Echo"}) || !slices.Equal(invalidOnly, []string{"only.Bad"}) {
		t.Errorf("ServicesWithInvalid: %v, %v, %v; want [demo.Echo], [only.Bad]", keys, invalidOnly, err)
	}
}
