package kernel

import (
	"context"
	"testing"
	"time"
)

// A step left running when its ctx's deadline passed is said to have
// been waited for the time it was given, however late this process
// noticed the deadline: the CI of ee8b769 failed on "did not return
// within 10.1s" for a call's 10 s bound at load 12.
func TestGivenWaitIsTheDeadlineNotTheWakeUp(t *testing.T) {
	start := time.Now().Add(-1100 * time.Millisecond)
	ctx, cancel := context.WithDeadline(context.Background(), start.Add(time.Second)) // passed 100 ms ago
	defer cancel()
	<-ctx.Done()
	if got := givenWait(ctx, start); got != time.Second {
		t.Errorf("givenWait = %v, want the 1s the step was given", got)
	}
	if e := (&LeftRunningError{Op: "refer demo.Echo", Step: "registry \"x\" Subscribe of demo.Echo", Waited: givenWait(ctx, start)}); e.Error() !=
		`kernel: refer demo.Echo: registry "x" Subscribe of demo.Echo did not return within 1s; stopped waiting for it (it may still finish later)` {
		t.Errorf("error = %q", e.Error())
	}
	// cancelled, or no deadline: how long it was really waited for
	c2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if got := givenWait(c2, start); got < 1100*time.Millisecond {
		t.Errorf("givenWait of a cancelled ctx = %v, want the time since start", got)
	}
	// a deadline already past when the step started (within's grace window)
	late, cancel3 := context.WithDeadline(context.Background(), start.Add(-time.Second))
	defer cancel3()
	if got := givenWait(late, start); got < 1100*time.Millisecond {
		t.Errorf("givenWait of a ctx past its deadline at start = %v, want the time since start", got)
	}
}
