package forking_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/clustertest"
	"github.com/airnode/airnode/internal/testproxy"
	"github.com/airnode/airnode/spi"
)

// When every fork fails, one that may have run gives the call its status,
// even if a fork that did not run failed after it: A answers SERVER_ERROR
// at once (it ran), B, which does not serve t.Svc, answers
// SERVICE_NOT_FOUND ("the call did not run") later, its request held by a
// paused proxy until A has failed. The call failed SERVICE_NOT_FOUND
// "the last: SERVICE_NOT_FOUND ..." before: a status that invites a
// resend of a call that ran on A.
func TestDub3_ForkingFailsWithAForkThatMayHaveRun(t *testing.T) {
	a := &clustertest.Svc{Name: "A", Fail: spi.Errorf(spi.StatusServerError, "A: this node is unwell")}
	_, addrs := clustertest.Start(t, "", a)
	px := testproxy.New(t, clustertest.Elsewhere(t, &clustertest.Svc{}))
	ref := clustertest.Direct(t, "cluster=forking&timeout=5s&outlier.consecutive=0", addrs[0], px.Addr())
	px.Pause(true)
	done := make(chan error, 1)
	go func() {
		_, err := ref.Invoke(context.Background(), "Who")
		done <- err
	}()
	for a.Runs() < 1 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // A's answer comes back
	px.Pause(false)
	err := <-done
	msg := err.Error()
	if spi.StatusOf(err) != spi.StatusServerError || !strings.Contains(msg, "'s, the last to fail that may have run (1 other fork did not run):\n") ||
		!strings.Contains(msg, ", "+addrs[0]+": SERVER_ERROR: A: this node is unwell") || !strings.Contains(msg, ", "+px.Addr()+": SERVICE_NOT_FOUND: ") {
		t.Fatalf("got %v\nwant A's SERVER_ERROR, B's SERVICE_NOT_FOUND counted after it, each fork on its line", err)
	}
	if !strings.HasPrefix(msg, "SERVER_ERROR: forking: t.Svc.Who: 2 of 2 forks failed on [") {
		t.Errorf("message %q: want it to count the forks", msg)
	}
}
