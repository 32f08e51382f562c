package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// ErrNoStock is the shop's own sentinel: it does not cross the wire.
var ErrNoStock = errors.New("no stock")

// StockError is the shop's own error type: it does not cross the wire.
type StockError struct{ SKU string }

func (e *StockError) Error() string { return "no stock of " + e.SKU }

// Shop returns its errors three ways.
type Shop struct{}

// Buy returns the shop's own error type: SERVICE_ERROR with its text.
func (Shop) Buy(ctx context.Context, sku string) (string, error) {
	return "", &StockError{SKU: sku}
}

// Reserve wraps the shop's sentinel: SERVICE_ERROR with the text.
func (Shop) Reserve(ctx context.Context, sku string) (string, error) {
	return "", fmt.Errorf("reserve %s: %w", sku, ErrNoStock)
}

// Order chooses the status with spi.Errorf.
func (Shop) Order(ctx context.Context, sku string) (string, error) {
	return "", spi.Errorf(spi.StatusBadRequest, "order %s: %w", sku, ErrNoStock)
}

// What a provider method's error becomes on the consumer: an *spi.Error
// with the status (SERVICE_ERROR unless the method returned an *spi.Error
// of its own) and the error's text. The method's Go type, its wrapped
// errors and a result returned with the error stay on the provider, so
// errors.As and errors.Is on the consumer match *spi.Error and the spi
// sentinels only.
func Example_handlerErrors() {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	provider := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	defer provider.Close()
	exp, err := provider.Export(ctx, Shop{}, spi.MustParse("airnode://127.0.0.1:0/example.Shop"))
	if err != nil {
		panic(err)
	}
	consumer := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet))
	defer consumer.Close()
	ref, err := consumer.Refer(ctx, spi.MustParse("airnode://"+exp.URL().Address()+"/example.Shop?timeout=2s&retries=0"), spi.URL{})
	if err != nil {
		panic(err)
	}
	for _, m := range []string{"Buy", "Reserve", "Order"} {
		_, err := ref.Invoke(ctx, m, "x1")
		var e *spi.Error
		var own *StockError
		fmt.Printf("%s: %v | status %v, errors.As(*spi.Error) %v, errors.As(*StockError) %v, errors.Is(ErrNoStock) %v\n",
			m, err, spi.StatusOf(err), errors.As(err, &e), errors.As(err, &own), errors.Is(err, ErrNoStock))
	}
	// Output:
	// Buy: SERVICE_ERROR: no stock of x1 | status SERVICE_ERROR, errors.As(*spi.Error) true, errors.As(*StockError) false, errors.Is(ErrNoStock) false
	// Reserve: SERVICE_ERROR: reserve x1: no stock | status SERVICE_ERROR, errors.As(*spi.Error) true, errors.As(*StockError) false, errors.Is(ErrNoStock) false
	// Order: BAD_REQUEST: order x1: no stock | status BAD_REQUEST, errors.As(*spi.Error) true, errors.As(*StockError) false, errors.Is(ErrNoStock) false
}
