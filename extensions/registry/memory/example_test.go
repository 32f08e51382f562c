package memory_test

import (
	"context"
	"fmt"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/spi"
)

// Two registries built by one Builder from the same URL share providers.
func Example() {
	b := memory.NewBuilder()
	provider, _ := b.Build(spi.MustParse("memory://"))
	consumer, _ := b.Build(spi.MustParse("memory://"))
	defer provider.Close()
	defer consumer.Close()

	ctx := context.Background()
	_ = provider.Register(ctx, spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?weight=50"))
	list, _ := consumer.Lookup(ctx, spi.MustParse("airnode:///demo.Echo"))
	fmt.Println(list[0])
	services, _ := consumer.Services(ctx)
	fmt.Println(services)
	// Output:
	// airnode://127.0.0.1:20880/demo.Echo?weight=50
	// [demo.Echo]
}
