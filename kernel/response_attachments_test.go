package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// respSvc sets response attachments from its methods.
type respSvc struct{ late chan error }

func (respSvc) Page(ctx context.Context, n int) ([]int, error) {
	if err := spi.SetResponseAttachments(ctx, "cursor", fmt.Sprint(n+10), "server-timing", "db;dur=1"); err != nil {
		return nil, err
	}
	// a later value of a key replaces the earlier one
	if err := spi.SetResponseAttachments(ctx, "cursor", fmt.Sprint(n+20)); err != nil {
		return nil, err
	}
	return []int{n}, nil
}

func (respSvc) Refuse(ctx context.Context) error {
	if err := spi.SetResponseAttachments(ctx, "reason-code", "E42"); err != nil {
		return err
	}
	return spi.Errorf(spi.StatusBadRequest, "refused")
}

func (respSvc) Bad(ctx context.Context) (string, error) {
	var errs []string
	for _, kv := range [][]string{{"odd"}, {"", "v"}, {"Remote", "x"}, {"timeout", "1s"}} {
		if err := spi.SetResponseAttachments(ctx, kv...); err != nil {
			errs = append(errs, err.Error())
		}
	}
	return strings.Join(errs, "\n"), nil
}

func (s respSvc) Late(ctx context.Context) error {
	go func() {
		time.Sleep(100 * time.Millisecond) // the answer has gone by then
		s.late <- spi.SetResponseAttachments(ctx, "late", "1")
	}()
	return nil
}

func (respSvc) None(ctx context.Context) (string, error) { return "plain", nil }

func respRef(t *testing.T) (*kernel.Reference, chan error) {
	late := make(chan error, 1)
	return exportAndRefer(t, respSvc{late: late}, "test.Resp", "transport=tcp", "transport=tcp&timeout=5s"), late
}

func TestResponseAttachmentsReachTheCaller(t *testing.T) {
	ref, late := respRef(t)
	ctx := context.Background()

	var got map[string]string
	var page []int
	if err := ref.Call(spi.ReceiveAttachments(ctx, &got), "Page", []any{5}, &page); err != nil {
		t.Fatal(err)
	}
	if got["cursor"] != "25" || got["server-timing"] != "db;dur=1" || len(got) != 2 {
		t.Fatalf("Call received %v; want cursor=25 (the later value), server-timing", got)
	}

	// Invoke, and a failed call: the answer's attachments come with its error
	got = map[string]string{"stale": "x"}
	_, err := ref.Invoke(spi.ReceiveAttachments(ctx, &got), "Refuse")
	if !errors.Is(err, spi.ErrBadRequest) || got["reason-code"] != "E42" || got["stale"] != "" {
		t.Fatalf("Invoke(Refuse) = %v, received %v; want BAD_REQUEST and reason-code=E42 only", err, got)
	}

	// a Bind stub, and a method that sets none: nil
	var c struct {
		Page func(context.Context, int) ([]int, error)
		None func(context.Context) (string, error)
	}
	if err := ref.Bind(&c); err != nil {
		t.Fatal(err)
	}
	got = nil
	if _, err := c.Page(spi.ReceiveAttachments(ctx, &got), 1); err != nil || got["cursor"] != "21" {
		t.Fatalf("stub Page: %v, received %v; want cursor=21", err, got)
	}
	got = map[string]string{"stale": "x"}
	if _, err := c.None(spi.ReceiveAttachments(ctx, &got)); err != nil || got != nil {
		t.Fatalf("stub None: %v, received %v; want nil", err, got)
	}

	// concurrent calls, each with its own destination
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			var mine map[string]string
			var p []int
			if err := ref.Call(spi.ReceiveAttachments(ctx, &mine), "Page", []any{i}, &p); err != nil {
				t.Error(err)
				return
			}
			if want := fmt.Sprint(i + 20); mine["cursor"] != want {
				t.Errorf("call %d received cursor %q; want %s", i, mine["cursor"], want)
			}
		})
	}
	wg.Wait()

	// bad keys are refused in the method, naming why; the call goes on
	var errs string
	if err := ref.Call(ctx, "Bad", nil, &errs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"odd number of arguments (1)", "an empty key", `key "Remote" is reserved`, `key "timeout" is reserved`} {
		if !strings.Contains(errs, want) {
			t.Errorf("Bad's errors lack %q:\n%s", want, errs)
		}
	}

	// a set after the method returned fails: its answer has gone
	if err := ref.Call(ctx, "Late", nil, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-late:
		if err == nil || !strings.Contains(err.Error(), "after the method returned") {
			t.Fatalf("a late SetResponseAttachments: %v; want an error saying the answer was sent", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the late set never returned")
	}

	// outside a provider call
	if err := spi.SetResponseAttachments(ctx, "k", "v"); !errors.Is(err, spi.ErrNotProviderCall) {
		t.Fatalf("SetResponseAttachments(Background) = %v; want ErrNotProviderCall", err)
	}
}
