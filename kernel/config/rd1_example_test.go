package config_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

type greeter struct{}

func (greeter) Hello(_ context.Context, name string) (string, error) { return "Hello, " + name, nil }

// A Go program running plugins.yaml as airnode serve does (README, "A Go
// program uses plugins.yaml"), with the file's registry left empty: the
// default registry, the file registry in its default directory.
func ExampleConfig_RegistryURL() {
	// This example's own default directory, so that it leaves nothing in
	// the user's: the file registry's default is
	// $XDG_RUNTIME_DIR/airnode/registry.
	dir, _ := os.MkdirTemp("", "airnode-example")
	defer os.RemoveAll(dir)
	old, had := os.LookupEnv("XDG_RUNTIME_DIR")
	os.Setenv("XDG_RUNTIME_DIR", dir)
	defer func() {
		if had {
			os.Setenv("XDG_RUNTIME_DIR", old)
		} else {
			os.Unsetenv("XDG_RUNTIME_DIR")
		}
	}()
	file := filepath.Join(dir, "plugins.yaml")
	os.WriteFile(file, []byte("listen: 127.0.0.1:0\nregistry: \"\"   # the default registry\nshutdown: {wait: 0s}\n"), 0o644)

	ctx := context.Background()
	cfg, err := config.Load(config.Source{File: file})
	if err != nil {
		fmt.Println(err)
		return
	}
	cat := bundle.Catalogs()
	host := pluginhost.New(cfg.Plugins)
	if err := host.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	defer host.Close()
	if err := host.Register(cat); err != nil {
		fmt.Println(err)
		return
	}

	reg, err := cfg.RegistryURL(cat) // "" is file:// (the default directory), as serve uses it
	if err != nil {
		fmt.Println(err)
		return
	}
	node := kernel.NewNode(cat, kernel.WithRegistry(reg), kernel.WithShutdownWait(cfg.Shutdown.Wait))
	defer node.Shutdown(ctx)
	u, err := cfg.ExportURL(config.Service{Interface: "example.Greeter"})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := node.Export(ctx, greeter{}, u); err != nil {
		fmt.Println(err)
		return
	}
	ru, _ := cfg.ApplyReference(spi.MustParse("airnode:///example.Greeter?timeout=5s"))
	ref, err := node.Refer(ctx, ru, spi.URL{})
	if err != nil {
		fmt.Println(err)
		return
	}
	var greeting string
	err = ref.Call(ctx, "Hello", []any{"Ann"}, &greeting)
	fmt.Println(reg, greeting, err)
	entries, _ := filepath.Glob(filepath.Join(dir, "airnode", "registry", "example.Greeter", "providers", "*"))
	fmt.Println(len(entries), "provider entry in", "$XDG_RUNTIME_DIR/airnode/registry")
	// Output:
	// file:// Hello, Ann <nil>
	// 1 provider entry in $XDG_RUNTIME_DIR/airnode/registry
}
