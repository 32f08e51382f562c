package kernel

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// boomService panics in Boom; Remote returns the consumer's address as the
// provider sees it.
type boomService struct{}

func (boomService) Boom(ctx context.Context, what string) (string, error) {
	panic("kaboom: " + what)
}

func (boomService) Remote(ctx context.Context) (string, error) {
	return spi.IncomingAttachments(ctx)[spi.AttachmentRemote], nil
}

// TestLib1_MethodPanicIsLogged (tester47 finding 2): a provider method
// that panics is answered SERVER_ERROR and logged on the provider's
// logger at Error, as net/http's "http: panic serving": service, method,
// the panic value, the consumer's address and the stack (naming the
// panicking method); 20 panics of one method make the 5 lines of a
// rate-bounded burst (1, 2, 4, 8, 16), and the connection goes on.
// Over a real loopback connection.
func TestLib1_MethodPanicIsLogged(t *testing.T) {
	cat := testCatalogs(t)
	var log logbuf.Buffer
	p := NewNode(cat, WithLogger(slog.New(slog.NewTextHandler(&log, nil))), WithShutdownWait(0))
	defer p.Close()
	ctx := context.Background()
	exp, err := p.Export(ctx, boomService{}, spi.MustParse("airnode://127.0.0.1:0/lib1.Boom"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	ref, err := c.Refer(ctx, spi.MustParse("airnode://"+exp.URL().Address()+"/lib1.Boom?timeout=5s"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	var remote string
	if err := ref.Call(ctx, "Remote", nil, &remote); err != nil || remote == "" {
		t.Fatalf("Remote = %q, %v", remote, err)
	}
	for i := range 20 {
		err := ref.Call(ctx, "Boom", []any{"x"}, nil)
		var se *spi.Error
		if !errors.As(err, &se) || se.Status != spi.StatusServerError || !strings.Contains(err.Error(), "panic in lib1.Boom.Boom: kaboom: x") {
			t.Fatalf("call %d: err = %v, want SERVER_ERROR naming the panic", i, err)
		}
	}
	lines, last, err := logbuf.Burst(log.String(), "panic serving a call")
	if err != nil {
		t.Fatalf("%v; log:\n%s", err, log.String())
	}
	if len(lines) != 5 || last != 16 {
		t.Errorf("20 panics logged %d lines, the last in_burst=%d; want 5 lines, the last in_burst=16; log:\n%s", len(lines), last, log.String())
	}
	first := lines[0]
	for _, want := range []string{"level=ERROR", `msg="panic serving a call: answered SERVER_ERROR"`,
		"service=lib1.Boom", "method=Boom", `panic="kaboom: x"`, "consumer=" + remote, "kernel.boomService.Boom"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first line lacks %s:\n%s", want, first)
		}
	}
	if err := ref.Call(ctx, "Remote", nil, &remote); err != nil {
		t.Errorf("a call after the panics: %v", err)
	}
}
