package cli

import (
	"testing"

	fileregistry "github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/kernel"
)

// TestFix35_FileRegistrySchemeIsTheKernels: the file registry skips a
// providers entry of another scheme than fileregistry.ProviderScheme as
// invalid; it cannot import kernel, so this checks that it names the
// kernel's one protocol, which the directory takes. (Through the binary:
// TestAbuse2_F5F6_JunkInTheRegistryDirectory's hand-http entry, shown by
// registry ls as invalid and warned once by call.)
func TestFix35_FileRegistrySchemeIsTheKernels(t *testing.T) {
	if fileregistry.ProviderScheme != kernel.Protocol {
		t.Fatalf("file registry takes provider scheme %q, the kernel %q", fileregistry.ProviderScheme, kernel.Protocol)
	}
}
