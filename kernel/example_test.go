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
// and call it.
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
