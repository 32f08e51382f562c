package threadlimit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/threadlimit"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func TestBuildChecks(t *testing.T) {
	b := &threadlimit.Builder{}
	for _, v := range []string{"0", "-3", "x", "2000000"} {
		if _, err := b.Build(spi.MustParse("airnode://127.0.0.1:1/s?threads=" + v)); err == nil || !strings.Contains(err.Error(), `"threads"`) {
			t.Errorf("threads=%s: %v", v, err)
		}
	}
	if _, err := b.Build(spi.MustParse("airnode://127.0.0.1:1/a?threads=2")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Build(spi.MustParse("airnode://127.0.0.1:1/b?threads=3")); err == nil || !strings.Contains(err.Error(), "threads=2") {
		t.Errorf("conflicting caps on one address: %v", err)
	}
	if _, err := b.Build(spi.MustParse("airnode://127.0.0.1:2/b?threads=3")); err != nil {
		t.Errorf("another address: %v", err)
	}
}

// Two services on one address share threads=3; calls beyond are refused
// at once; another address has its own cap.
func TestCapSharedPerAddress(t *testing.T) {
	b := &threadlimit.Builder{}
	fa, _ := b.Build(spi.MustParse("airnode://127.0.0.1:1/a?threads=3"))
	fb, _ := b.Build(spi.MustParse("airnode://127.0.0.1:1/b?threads=3"))
	fc, _ := b.Build(spi.MustParse("airnode://127.0.0.1:2/c?threads=3"))
	release := make(chan struct{})
	next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:1/a"), func(context.Context, *spi.Invocation) spi.Result {
		<-release
		return spi.Result{}
	})
	results := make(chan error, 16)
	var wg sync.WaitGroup
	for i := range 8 {
		f := fa
		if i%2 == 1 {
			f = fb
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- f.Invoke(context.Background(), next, &spi.Invocation{Service: "a", Method: "M"}).Err
		}()
	}
	for range 5 {
		select {
		case err := <-results:
			if !errors.Is(err, spi.ErrServerThreadpoolExhausted) {
				t.Fatalf("refusal: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("refusals did not come at once")
		}
	}
	// The other address is not affected.
	wg.Add(1)
	go func() {
		defer wg.Done()
		results <- fc.Invoke(context.Background(), next, &spi.Invocation{Service: "c", Method: "M"}).Err
	}()
	close(release)
	wg.Wait()
	close(results)
	for err := range results {
		if err != nil {
			t.Errorf("admitted call: %v", err)
		}
	}
}
