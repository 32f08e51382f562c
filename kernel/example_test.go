package kernel_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// Greeter is an ordinary Go type; its exported methods of shape
// func(ctx, args...) (R, error) become the service's methods.
type Greeter struct{}

func (Greeter) Hello(ctx context.Context, name string) (string, error) {
	return "hello, " + name, nil
}

// Export a Go value on a free loopback port, then refer to it by address
// and call it. Each node may have catalogs of its own here, as the
// consumer names the provider's address; nodes that find each other
// through a memory:// registry must share one catalog set
// (Example_registry).
func Example() {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))

	provider := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	defer provider.Close()
	exp, err := provider.Export(ctx, Greeter{}, spi.MustParse("airnode://127.0.0.1:0/example.Greeter"))
	if err != nil {
		panic(err)
	}

	consumer := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	defer consumer.Close()
	ref, err := consumer.Refer(ctx, spi.MustParse("airnode://"+exp.URL().Address()+"/example.Greeter?timeout=2s"), spi.URL{})
	if err != nil {
		panic(err)
	}

	var greeting string
	if err := ref.Call(ctx, "Hello", []any{"airnode"}, &greeting); err != nil {
		panic(err)
	}
	fmt.Println(greeting)

	_, err = ref.Invoke(ctx, "Goodbye")
	fmt.Println(spi.StatusOf(err))
	// Output:
	// hello, airnode
	// SERVICE_NOT_FOUND
}

// Refer through a registry: the provider registers its URL there, and the
// consumer's URL has no host, "airnode:///<interface>" (a bare service key
// such as "example.Greeter" is the CLI's shorthand, not a URL). The
// registry URL names the registry: memory:// in one process,
// file:///var/lib/airnode/registry on one machine,
// zookeeper://127.0.0.1:2181 across machines. A memory:// namespace is
// shared only by the nodes built from one catalog set: both nodes here
// get the same cat (one bundle.Catalogs() call); with a bundle.Catalogs()
// each, the consumer would find no provider.
func Example_registry() {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	cat := bundle.Catalogs() // one catalog set for both nodes: memory:// is shared through it
	registry := spi.MustParse("memory://example")

	provider := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithRegistry(registry), kernel.WithShutdownWait(0))
	defer provider.Close()
	if _, err := provider.Export(ctx, Greeter{}, spi.MustParse("airnode://127.0.0.1:0/example.Greeter")); err != nil {
		panic(err)
	}

	consumer := kernel.NewNode(cat, kernel.WithLogger(quiet), kernel.WithRegistry(registry))
	defer consumer.Close()
	ref, err := consumer.Refer(ctx, spi.MustParse("airnode:///example.Greeter?timeout=2s"), spi.URL{})
	if err != nil {
		panic(err)
	}
	var greeting string
	if err := ref.Call(ctx, "Hello", []any{"registry"}, &greeting); err != nil {
		panic(err)
	}
	fmt.Println(greeting)
	// Output: hello, registry
}
