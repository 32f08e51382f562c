package forking_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/clustertest"
	"github.com/airnode/airnode/spi"
)

// tester35 finding 8a: when every fork fails, the error counts the forks
// and names their providers, with the status of the last fork to fail
// (as before) and its error as the Cause. Two real providers, each
// counting its runs: both slow past timeout=200ms (SERVER_TIMEOUT, as the
// report's allslow.sh), then A failing fast with SERVER_ERROR while B is
// slow (the last to fail is B: SERVER_TIMEOUT).
func TestDub2_ForkingAllFailedNamesEveryFork(t *testing.T) {
	unwell := spi.Errorf(spi.StatusServerError, "A: this node is unwell")
	for _, tc := range []struct {
		name  string
		aFail error
	}{
		{"both slow", nil},
		{"A unwell, B slow", unwell},
	} {
		a, b := &clustertest.Svc{Name: "A", Fail: tc.aFail}, &clustertest.Svc{Name: "B"}
		ref, addrs := clustertest.Start(t, "cluster=forking&timeout=200&outlier.consecutive=0", a, b)
		_, err := ref.Invoke(context.Background(), "Work", 1000)
		msg := fmt.Sprint(err)
		if spi.StatusOf(err) != spi.StatusServerTimeout || !strings.HasPrefix(msg, "SERVER_TIMEOUT: forking: t.Svc.Work: 2 of 2 forks failed on [") ||
			!strings.Contains(msg, "'s, the last to fail:\n") || !strings.Contains(msg, addrs[0]) || !strings.Contains(msg, addrs[1]) {
			t.Errorf("%s: %v\nwant SERVER_TIMEOUT \"forking: t.Svc.Work: 2 of 2 forks failed on [both addresses]; the status is fork N's, the last to fail:\" and a line per fork", tc.name, err)
		}
		var e *spi.Error
		if !errors.As(err, &e) || spi.StatusOf(e.Cause) != spi.StatusServerTimeout {
			t.Errorf("%s: cause %v, want the last fork's SERVER_TIMEOUT", tc.name, e)
		}
		if n := clustertest.Settle(2, a, b); a.Runs() != 1 || b.Runs() != 1 {
			t.Errorf("%s: A ran %d, B %d (%d); want each fork run once", tc.name, a.Runs(), b.Runs(), n)
		}
	}
	// one fork: the provider's error as it is
	a := &clustertest.Svc{Name: "A", Fail: unwell}
	ref, _ := clustertest.Start(t, "cluster=forking&timeout=2s&outlier.consecutive=0", a)
	if _, err := ref.Invoke(context.Background(), "Who"); fmt.Sprint(err) != "SERVER_ERROR: A: this node is unwell" {
		t.Errorf("one provider: %v, want its SERVER_ERROR as it is", err)
	}
}
