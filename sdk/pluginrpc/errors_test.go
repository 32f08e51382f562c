package pluginrpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
	"github.com/airnode/airnode/spi"
)

func TestErrorsCrossTheBoundaryIntact(t *testing.T) {
	for _, c := range []struct {
		in    error
		check func(error) bool
		text  string
	}{
		{nil, func(e error) bool { return e == nil }, ""},
		{spi.Errorf(spi.StatusServerTimeout, "slow %d", 3), func(e error) bool {
			var se *spi.Error
			return errors.As(e, &se) && se.Status == spi.StatusServerTimeout && errors.Is(e, spi.ErrServerTimeout)
		}, "SERVER_TIMEOUT: slow 3"},
		{fmt.Errorf("wrapped: %w", spi.Errorf(spi.StatusBadRequest, "bad")), func(e error) bool { return errors.Is(e, spi.ErrBadRequest) }, "BAD_REQUEST: wrapped: bad"},
		{spi.ErrNotSupported, func(e error) bool { return errors.Is(e, spi.ErrNotSupported) }, spi.ErrNotSupported.Error()},
		{fmt.Errorf("static: %w", spi.ErrNotSupported), func(e error) bool { return errors.Is(e, spi.ErrNotSupported) }, "static: registry: operation not supported"},
		{context.DeadlineExceeded, func(e error) bool { return errors.Is(e, context.DeadlineExceeded) }, "context deadline exceeded"},
		{context.Canceled, func(e error) bool { return errors.Is(e, context.Canceled) }, ""},
		{errors.New("plain"), func(e error) bool { return e != nil && spi.StatusOf(e) == spi.StatusClientError }, "plain"},
	} {
		out := fromPB(toPB(c.in))
		if !c.check(out) {
			t.Errorf("%v became %v (%T)", c.in, out, out)
		}
		if c.text != "" && out.Error() != c.text {
			t.Errorf("%v became text %q, want %q", c.in, out.Error(), c.text)
		}
	}
}

// buildOnce builds a URL once however many ask at the same time, and a
// Build that hangs for one URL holds up neither other URLs nor the other
// point's handles (each server has its own).
func TestBuildOnceIsPerURL(t *testing.T) {
	var h handles[string]
	release := make(chan struct{})
	entered := make(chan struct{})
	hung := make(chan *pb.BuildReply, 1)
	go func() {
		hung <- h.buildOnce("filter Build", "x://h/a", func(spi.URL) (string, error) {
			close(entered)
			<-release
			return "a", nil
		})
	}()
	<-entered

	var builds atomic.Int32
	var wg sync.WaitGroup
	reps := make([]*pb.BuildReply, 8)
	for i := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i] = h.buildOnce("filter Build", "x://h/b", func(spi.URL) (string, error) {
				builds.Add(1)
				return "b", nil
			})
		}()
	}
	wg.Wait() // would never return if a's hung Build held the lock of b
	if n := builds.Load(); n != 1 {
		t.Errorf("8 concurrent Builds of one URL built %d times; want 1", n)
	}
	for i, r := range reps {
		if r.Error != nil || r.Handle != reps[0].Handle {
			t.Errorf("Build %d of one URL: handle %d, error %v; want handle %d", i, r.Handle, r.Error, reps[0].Handle)
		}
	}
	var lb handles[int]
	if rep := lb.buildOnce("loadbalance Build", "x://h/a", func(spi.URL) (int, error) { return 1, nil }); rep.Error != nil || rep.Handle != 1 {
		t.Errorf("balancer Build of the hung filter's URL: %v", rep)
	}

	close(release)
	if rep := <-hung; rep.Error != nil {
		t.Errorf("released Build: %v", rep.Error)
	}
	if rep := h.buildOnce("filter Build", "x://h/a", func(spi.URL) (string, error) {
		t.Error("a built URL was built again")
		return "", nil
	}); rep.Error != nil {
		t.Errorf("Build of a built URL: %v", rep.Error)
	}
	h.buildMu.Lock()
	n := len(h.building)
	h.buildMu.Unlock()
	if n != 0 {
		t.Errorf("%d per-URL build entries left after every Build returned; want 0", n)
	}
}

// nu48 F1: the sentinels the kernel classifies failures by cross with the
// error (pb.Error.Causes), several at once; an error from an older plugin,
// which sends none, arrives as before, without a Cause.
func TestSentinelCausesCrossTheBoundary(t *testing.T) {
	denied := &spi.Error{Status: spi.StatusBadRequest, Message: "no tenant", Cause: spi.ErrAccessDenied}
	e := toPB(denied)
	out := fromPB(e)
	if !errors.Is(out, spi.ErrAccessDenied) || !errors.Is(out, spi.ErrBadRequest) || out.Error() != "BAD_REQUEST: no tenant" || out.(*spi.Error).Cause != spi.ErrAccessDenied {
		t.Errorf("access denied became %v (%#v)", out, out)
	}
	old := &pb.Error{Status: e.Status, Message: e.Message} // no causes: an older plugin
	if out := fromPB(old); errors.Is(out, spi.ErrAccessDenied) || out.(*spi.Error).Cause != nil || out.Error() != "BAD_REQUEST: no tenant" {
		t.Errorf("from an older plugin: %v (%#v)", out, out)
	}
	sent := &spi.Error{Status: spi.StatusChannelInactive, Message: "gone", Cause: fmt.Errorf("dial: %w", errors.Join(spi.ErrNotConnected, spi.ErrRequestSent))}
	out = fromPB(toPB(sent))
	if !errors.Is(out, spi.ErrNotConnected) || !errors.Is(out, spi.ErrRequestSent) || errors.Is(out, spi.ErrGoAway) || errors.Is(out, spi.ErrAccessDenied) {
		t.Errorf("not connected + request sent became %v, Cause %v", out, errors.Unwrap(out))
	}
	plain := fmt.Errorf("watch: %w", spi.ErrGoAway) // no status
	if out := fromPB(toPB(plain)); !errors.Is(out, spi.ErrGoAway) || out.Error() != plain.Error() {
		t.Errorf("go-away without status became %v", out)
	}
	if out := fromPB(&pb.Error{Status: uint32(spi.StatusBadRequest), Message: "x", Causes: []string{"from_the_future"}}); out.(*spi.Error).Cause != nil {
		t.Errorf("an unknown cause name gave Cause %v; want none", errors.Unwrap(out))
	}
}
