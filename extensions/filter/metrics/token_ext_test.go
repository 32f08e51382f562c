package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// Tester finding (item 8): a wrong token was counted as a SERVICE_ERROR
// failure of the method on the provider (SUCCESS 50%), so a scanner made
// a healthy service look failing. Real nodes: the provider's row counts
// only the call with the right token, a success; the refused ones are in
// the token counter and the "rejected before the service" line; the
// consumer still sees, and counts, the refusal (BAD_REQUEST); a method only ever
// refused has no provider row.
func TestWrongTokenIsRejectedNotAFailureOfTheMethod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p := quietNode(t, kernel.WithShutdownWait(0))
	e, err := p.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?token=s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	c := quietNode(t)
	refer := func(token string) *kernel.Reference {
		r, err := c.Refer(ctx, spi.MustParse("airnode://"+e.URL().Address()+"/demo.Echo?retries=0&token="+token), spi.URL{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	before := metrics.Access.TokenRejections.Load()
	good, bad := refer("s3cret"), refer("guess")
	if _, err := good.Invoke(ctx, "Echo", 1); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"Echo", "Echo", "Sleep"} {
		if _, err := bad.Invoke(ctx, m, 1); !errors.Is(err, spi.ErrBadRequest) || !strings.Contains(err.Error(), "token: wrong token") {
			t.Fatalf("%s with a wrong token = %v; want BAD_REQUEST token: wrong token", m, err)
		}
	}
	preg, creg := registry(t, p), registry(t, c)
	row, _ := preg.Lookup(spi.Provider, "demo.Echo", "Echo")
	if row.Count != 1 || row.Failures != 0 || row.SuccessRate != 1 || row.InFlight != 0 {
		t.Errorf("provider row %+v: want 1 call, no failure, nothing in flight", row)
	}
	for _, r := range preg.Snapshot() {
		if r.Side == spi.Provider && r.Method == "Sleep" {
			t.Errorf("provider has a row for Sleep, whose only call was refused: %+v", r)
		}
	}
	if row, _ := creg.Lookup(spi.Consumer, "demo.Echo", "Echo"); row.Count != 3 || row.FailuresByStatus["BAD_REQUEST"] != 2 {
		t.Errorf("consumer row %+v: want 3 calls, 2 BAD_REQUEST", row)
	}
	n := metrics.Access.TokenRejections.Load()
	if n-before != 3 {
		t.Errorf("token rejections went from %d to %d; want 3 more", before, n)
	}
	var b bytes.Buffer
	if err := metrics.WriteRejected(&b, metrics.Counters()); err != nil {
		t.Fatal(err)
	}
	// other tests of the process may have counted refused TLS handshakes, printed after it
	if want := "wrong or missing token " + strconv.FormatUint(n, 10); !strings.HasPrefix(b.String(), "provider requests rejected before the service: ") ||
		!strings.Contains(strings.TrimSuffix(b.String(), "\n")+",", want+",") {
		t.Errorf("WriteRejected = %q; want the line to say %q", b.String(), want)
	}
}
