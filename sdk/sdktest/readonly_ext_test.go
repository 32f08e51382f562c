package sdktest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/examples/staticregistry"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/sdk/sdktest"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// providersFile returns an empty providers file of the staticregistry
// example and a publish function for the read-only suite that rewrites
// it (renamed into place, so the registry never reads half a file).
func providersFile(t *testing.T) (string, func(t *testing.T, providers []spi.URL)) {
	dir := t.TempDir()
	file := filepath.Join(dir, "providers.txt")
	write := func(t *testing.T, providers []spi.URL) {
		var b strings.Builder
		for _, u := range providers {
			b.WriteString(u.String() + "\n")
		}
		tmp := filepath.Join(dir, "providers.tmp")
		if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
	}
	write(t, nil)
	return file, write
}

// The read-only subset, in process: the staticregistry example, which
// cannot register, passes it served over gRPC.
func TestReadOnlyRegistryThroughGRPC(t *testing.T) {
	file, publish := providersFile(t)
	sdktest.TestReadOnlyRegistry(t, staticregistry.Builder{}, spi.MustParse("static://"+file+"?interval=20ms"), publish)
}

// The read-only subset against a real plugin process: the staticregistry
// example's binary, started by the host's own launcher (as `airnode
// plugin check` starts it); with publish nil, the checks that need no
// backend change, as plugin check runs them.
func TestReadOnlyRegistryPluginProcess(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "staticregistry")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/airnode/airnode/examples/staticregistry/cmd/staticregistry").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pr, err := pluginhost.NewProbe(ctx, config.Plugin{Command: bin})
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	rb := pr.Registry()
	if rb == nil {
		t.Fatalf("the staticregistry binary provides no registry: %+v", pr.Provides)
	}
	file, publish := providersFile(t)
	mk := func(t *testing.T) spi.Registry {
		r, err := rb.Build(spi.MustParse("static://" + file + "?interval=20ms"))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Run("publish", func(t *testing.T) { spitest.TestReadOnlyRegistry(t, mk, publish) })
	t.Run("nopublish", func(t *testing.T) { spitest.TestReadOnlyRegistry(t, mk, nil) })
}
