package exchange

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// quoting answers BAD_REQUEST quoting its first argument whole, as a
// codec's decode error quotes the input ("json: ... number 1000000…").
type quoting struct{}

func (quoting) Serve(_ context.Context, req *Request) spi.Result {
	var s string
	if err := req.Args.Decode(&s); err != nil {
		return spi.Result{Err: err}
	}
	return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "argument 0: cannot use number %s here, nor %q", s, "short")}
}

// tester49 finding 9: a BAD_REQUEST echoed a 1,000,001-digit number back
// whole. The provider now shortens, in a BAD_REQUEST's text, each run of
// over echoWord bytes without a space to its first echoKeep bytes and
// "... (N bytes)"; the rest of the text is kept.
func TestBadRequest_EchoShortened(t *testing.T) {
	f := startServer(t, false, func(o *Options) { o.Handler = quoting{} })
	ch := f.dial(nil)
	digits := "1" + strings.Repeat("0", 1_000_000)
	res := ch.Invoke(context.Background(), mpCodec{}, echoInv("Echo", digits), 10*time.Second)
	var e *spi.Error
	if !errors.As(res.Err, &e) || e.Status != spi.StatusBadRequest {
		t.Fatalf("err %v, want BAD_REQUEST", res.Err)
	}
	want := "argument 0: cannot use number " + digits[:echoKeep] + "... (1000001 bytes) here, nor \"short\""
	if e.Message != want {
		t.Errorf("message of %d bytes %.200q, want %q", len(e.Message), e.Message, want)
	}
}

func TestShortenEcho(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes, 2 a character
	for _, tc := range []struct{ in, want string }{
		{"short words stay", "short words stay"},
		{"x " + long + " y", "x " + strings.Repeat("é", 32) + "... (200 bytes) y"},
		{strings.Repeat("ab ", 2000), strings.Repeat("ab ", 2000)[:echoMax] + "... (6000 bytes)"},
	} {
		if got := shortenEcho(tc.in); got != tc.want {
			t.Errorf("shortenEcho(%.40q...) = %.120q, want %.120q", tc.in, got, tc.want)
		}
	}
}
