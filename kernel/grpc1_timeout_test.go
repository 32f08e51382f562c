package kernel

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// budgetService reports what its method sees of a call: the attachments
// and, as "remaining_ms", the time left before its context's deadline.
type budgetService struct{}

func (budgetService) Budget(ctx context.Context) (map[string]string, error) {
	got := map[string]string{}
	for k, v := range spi.IncomingAttachments(ctx) {
		got[k] = v
	}
	if d, ok := ctx.Deadline(); ok {
		got["remaining_ms"] = time.Until(d).Round(time.Millisecond).String()
	}
	return got, nil
}

// A caller's "timeout" attachment is that call's timeout per attempt, in
// place of the reference's "timeout" (default 1s), as Dubbo's per-call
// RpcContext timeout: longer and shorter, a Go duration or bare
// milliseconds, in any case; the context's deadline still bounds the
// call; the provider's method gets the deadline, not the attachment; a
// bad value is CLIENT_ERROR with the URL key's wording.
func TestTimeoutAttachment(t *testing.T) {
	p := NewNode(testCatalogs(t), WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	e, err := p.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Export(ctxT(t), budgetService{}, spi.MustParse("airnode://"+e.URL().Address()+"/t.Budget")); err != nil {
		t.Fatal(err)
	}
	c := consumer(t)
	echo := refer(t, c, "airnode://"+e.URL().Address()+"/demo.Echo") // timeout: the default 1s
	budget := refer(t, c, "airnode://"+e.URL().Address()+"/t.Budget")
	sleep := func(ctx context.Context, ms int, timeout string) (time.Duration, error) {
		began := time.Now()
		_, err := echo.Invoke(spi.WithAttachments(ctx, "timeout", timeout), "Sleep", ms)
		return time.Since(began), err
	}

	// longer than the URL's 1s
	if took, err := sleep(ctxT(t), 1300, "3s"); err != nil {
		t.Fatalf("Sleep(1300) with timeout 3s: %v after %v", err, took)
	}
	// shorter, in bare milliseconds and another case
	took, err := sleep(ctxT(t), 900, "200")
	if st := spi.StatusOf(err); st != spi.StatusServerTimeout && st != spi.StatusClientTimeout || took > 700*time.Millisecond {
		t.Fatalf("Sleep(900) with timeout 200 (ms): %v after %v; want a timeout at about 200ms", err, took)
	}
	for _, k := range []string{"TIMEOUT", "Timeout"} {
		var got map[string]string
		if err := budget.Call(spi.WithAttachments(ctxT(t), k, "250ms"), "Budget", nil, &got); err != nil {
			t.Fatal(err)
		}
		if d, err := time.ParseDuration(got["remaining_ms"]); err != nil || d > 250*time.Millisecond || d < 100*time.Millisecond {
			t.Errorf("%s=250ms: the provider's deadline was %v ahead; want about 250ms", k, got["remaining_ms"])
		}
	}
	// the provider's method sees the deadline, not the attachment
	var got map[string]string
	if err := budget.Call(spi.WithAttachments(ctxT(t), "timeout", "3000", "tenant", "x"), "Budget", nil, &got); err != nil {
		t.Fatal(err)
	}
	if d, err := time.ParseDuration(got["remaining_ms"]); err != nil || d <= 2*time.Second || d > 3*time.Second {
		t.Errorf("timeout=3000: the provider's deadline was %v ahead; want about 3s", got["remaining_ms"])
	}
	if _, seen := got["timeout"]; seen || got["tenant"] != "x" {
		t.Errorf("the provider's method saw %v; want tenant and no timeout", got)
	}

	// the context's deadline still bounds the call
	ctx, cancel := context.WithTimeout(ctxT(t), 300*time.Millisecond)
	defer cancel()
	took, err = sleep(ctx, 2000, "5s")
	if !errors.Is(err, context.DeadlineExceeded) || took > 1500*time.Millisecond {
		t.Errorf("Sleep(2000), ctx 300ms, timeout 5s: %v after %v; want the ctx's deadline at about 300ms", err, took)
	}

	// a bad value: CLIENT_ERROR before anything is sent, worded as the
	// URL key's
	for v, want := range map[string]string{
		"abc":    "want a duration such as 1.5s, 200ms or 3000 (milliseconds)",
		"0":      "want a positive duration such as 500ms, 1.5s or 3000 (ms); there is no \"no timeout\", use a large one",
		"-5":     "want a positive duration such as 1.5s, 200ms or 3000 (milliseconds), not a negative one",
		"500us":  "want a duration of at least 1ms",
		"1s, 2s": "want a duration such as",
	} {
		_, err := sleep(ctxT(t), 0, v)
		prefix := `kernel: call demo.Echo.Sleep: invalid value "` + v + `" for attachment "timeout" (this call's timeout, read as the URL key): `
		if spi.StatusOf(err) != spi.StatusClientError || !strings.Contains(err.Error(), prefix+want) {
			t.Errorf("timeout=%q: %v; want CLIENT_ERROR %q", v, err, prefix+want)
		}
		_, uerr := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?timeout="+strings.ReplaceAll(v, " ", "%20")), spi.URL{})
		if uerr == nil || !strings.Contains(uerr.Error(), `for URL key "timeout": `+want) {
			t.Errorf("URL key timeout=%q: %v; want the same wording %q", v, uerr, want)
		}
	}
	_, err = echo.Invoke(spi.WithAttachments(ctxT(t), "timeout", "1s", "TIMEOUT", "2s"), "Echo", "x")
	if spi.StatusOf(err) != spi.StatusClientError || !strings.Contains(err.Error(), `attachment "timeout" is given twice`) {
		t.Errorf("timeout and TIMEOUT: %v; want CLIENT_ERROR", err)
	}
}
