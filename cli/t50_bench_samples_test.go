package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/airnode/airnode/bench"
)

// nu50 finding 4: when failed calls mix statuses, bench printed only the
// first error's message. Now the run keeps one message per status
// (bench.Report.ErrorSamples, --json error_samples) and the summary adds
// an "also" line for each status other than the first error's, most
// frequent first; a message not naming its status is prefixed with it.
func TestT50_BenchPrintsOneMessagePerStatus(t *testing.T) {
	gone := errors.New("CHANNEL_INACTIVE: provider is closing the channel")
	notFound := errors.New("SERVICE_NOT_FOUND: no provider available for demo.Echo")
	odd := errors.New("something odd")
	var n atomic.Int64
	r, err := bench.Run(context.Background(), bench.Config{Calls: 1000, Concurrency: 1, Warmup: 0,
		Classify: func(err error) string {
			switch err {
			case gone:
				return "CHANNEL_INACTIVE (not sent)"
			case notFound:
				return "SERVICE_NOT_FOUND"
			}
			return "SERVER_ERROR"
		}}, func(context.Context, int) error {
		switch i := n.Add(1); {
		case i == 1:
			return gone // the first error, and the rarest
		case i%10 == 0:
			return notFound
		case i%10 == 1:
			return odd
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ErrorSamples) != 3 || r.ErrorSamples["SERVICE_NOT_FOUND"] != notFound.Error() || r.ErrorSamples["SERVER_ERROR"] != odd.Error() {
		t.Fatalf("ErrorSamples = %q; want one message per status", r.ErrorSamples)
	}
	var out bytes.Buffer
	printOutcome(&out, "demo.Echo", benchOutcome{Report: r, Case: &benchCase{Req: 10, Resp: 10, Concurrency: 1}}, benchFlags{connections: 1})
	lines := strings.Split(out.String(), "\n")
	if len(lines) < 5 || lines[2] != "  first error "+gone.Error() ||
		lines[3] != "  also        "+notFound.Error() || lines[4] != "  also        SERVER_ERROR: something odd" {
		t.Fatalf("summary:\n%s", out.String())
	}
	if strings.Count(out.String(), "also") != 2 {
		t.Errorf("the first error's status is repeated:\n%s", out.String())
	}
}
