package failsafe_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// bizSvc fails each method in its own way.
type bizSvc struct{}

// Biz returns a plain Go error: SERVICE_ERROR, a business error.
func (bizSvc) Biz(ctx context.Context) (int, error) { return 0, errors.New("db down") }

// Stock returns a BizError under BAD_REQUEST: a business error too.
func (bizSvc) Stock(ctx context.Context) (int, error) {
	return 0, spi.Errorf(spi.StatusBadRequest, "place: %w", spi.NewBizError(1001, "OUT_OF_STOCK", "sku A-1 is out of stock", nil))
}

// Unwell answers SERVER_ERROR: a framework failure.
func (bizSvc) Unwell(ctx context.Context) (int, error) {
	return 0, spi.Errorf(spi.StatusServerError, "node unwell")
}

// Slow outlasts the caller's timeout: SERVER_TIMEOUT, a framework failure.
func (bizSvc) Slow(ctx context.Context) (int, error) {
	select {
	case <-ctx.Done():
	case <-time.After(2 * time.Second):
	}
	return 1, nil
}

// tester82 #1: failsafe returns a business error (the method ran and
// returned an error) unchanged, as Dubbo's FailsafeClusterInvoker lets a
// business exception through, and still swallows framework failures;
// over real loopback, with cluster=failsafe and the per-method key.
func TestFailsafeReturnsBusinessErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)
	pn := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	defer pn.Close()
	e, err := pn.Export(ctx, bizSvc{}, spi.MustParse("airnode://127.0.0.1:0/t.Biz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"cluster=failsafe", "methods.Biz.cluster=failsafe&methods.Stock.cluster=failsafe&methods.Unwell.cluster=failsafe&methods.Slow.cluster=failsafe"} {
		t.Run(q, func(t *testing.T) {
			var logs logbuf.Buffer
			cn := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), kernel.WithShutdownWait(0))
			defer cn.Close()
			r, err := cn.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/t.Biz?timeout=300ms&"+q), spi.URL{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if _, err := r.Invoke(ctx, "Biz"); spi.StatusOf(err) != spi.StatusServiceError || !strings.Contains(err.Error(), "db down") {
				t.Errorf("Biz: err %v; want the SERVICE_ERROR db down the method returned", err)
			}
			var be *spi.BizError
			if _, err := r.Invoke(ctx, "Stock"); !errors.As(err, &be) || be.Reason != "OUT_OF_STOCK" || spi.StatusOf(err) != spi.StatusBadRequest {
				t.Errorf("Stock: err %v; want the BizError OUT_OF_STOCK under BAD_REQUEST", err)
			}
			if strings.Contains(logs.String(), "returning the zero result") {
				t.Errorf("business errors were logged as swallowed:\n%s", logs.String())
			}
			for _, m := range []string{"Unwell", "Slow"} {
				if v, err := r.Invoke(ctx, m); err != nil || v != nil {
					t.Errorf("%s: %v, %v; want the zero result, swallowed", m, v, err)
				}
			}
			for _, want := range []string{"method=Unwell", "status=SERVER_ERROR", "method=Slow", "status=SERVER_TIMEOUT"} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("no swallowed warning with %s in:\n%s", want, logs.String())
				}
			}
		})
	}
}
