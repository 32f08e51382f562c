package token_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

type sec2Echo struct{}

func (sec2Echo) Echo(_ context.Context, s string) (string, error) { return s, nil }

// A provider logs the calls its token filter refuses at Warn, rate-bounded,
// with the peer's address, the service and method, and whether the token
// was missing or wrong, never a token (tester49 finding 6: refusals were
// only counted). 300 wrong calls from one peer make a handful of lines.
func TestSec2_RefusalsLoggedBounded(t *testing.T) {
	var plog logbuf.Buffer
	pn := kernel.NewNode(bundle.Catalogs(), kernel.WithShutdownWait(0),
		kernel.WithLogger(slog.New(slog.NewTextHandler(&plog, nil))))
	defer pn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	e, err := pn.Export(ctx, sec2Echo{}, spi.MustParse("airnode://127.0.0.1:0/demo.Echo?warmup=0&token=S3cr3tTok3n"))
	if err != nil {
		t.Fatal(err)
	}
	addr := e.URL().Address()
	cn := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(slog.New(slog.DiscardHandler)))
	defer cn.Close()
	call := func(query string) error {
		ref, err := cn.Refer(ctx, spi.MustParse("airnode://"+addr+"/demo.Echo?retries=0"+query), spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		return ref.Call(ctx, "Echo", []any{"x"}, &got)
	}
	if err := call("&token=S3cr3tTok3n"); err != nil {
		t.Fatalf("call with the token: %v", err)
	}
	if err := call(""); err == nil || !strings.Contains(err.Error(), "BAD_REQUEST: token: missing token") {
		t.Fatalf("call without a token: %v, want access denied", err)
	}
	for range 300 {
		if err := call("&token=guess1"); err == nil || !strings.Contains(err.Error(), "BAD_REQUEST: token: wrong token") {
			t.Fatalf("call with a wrong token: %v, want access denied", err)
		}
	}
	text := plog.String()
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, `msg="refusing calls without the provider's token"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) < 2 || len(lines) > 15 {
		t.Fatalf("%d refusal lines for 301 refusals, want 2..15:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, want := range []string{"reason=missing", "reason=wrong"} {
		l := lines[i]
		for _, w := range []string{"level=WARN", want, "provider=" + addr, "consumer=127.0.0.1:", "service=demo.Echo", "method=Echo"} {
			if !strings.Contains(l, w) {
				t.Errorf("line %q lacks %q", l, w)
			}
		}
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "in_burst=") {
		t.Errorf("last line %q does not say how many the burst had", last)
	}
	if strings.Contains(text, "S3cr3tTok3n") || strings.Contains(text, "guess1") {
		t.Errorf("the provider's log shows a token:\n%s", text)
	}
}
