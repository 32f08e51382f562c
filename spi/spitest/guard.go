package spitest

import (
	"errors"
	"fmt"
	"runtime/debug"
	"testing"
	"time"
)

// extPanic is a panic of the extension under test, recovered by a suite in
// one of its own goroutines and handed to the test as an error.
type extPanic struct {
	what  string // the call that panicked: "Select", "transport"...
	v     any
	stack []byte
}

func (e *extPanic) Error() string {
	return fmt.Sprintf("%s panicked: %v\n%s", e.what, e.v, e.stack)
}

// isPanic reports whether err is a recovered panic (an *extPanic).
func isPanic(err error) bool {
	var p *extPanic
	return errors.As(err, &p)
}

// catch, deferred directly (defer catch(t, "Select")), recovers a panic of
// the extension under test and fails t with the panic's value and the stack
// of the goroutine that panicked, so that one bad extension fails its
// subtest instead of killing the test binary. It calls only t.Errorf, so it
// may be deferred in any goroutine. A panic in a goroutine the extension
// starts itself cannot be recovered by anyone but the extension.
func catch(t testing.TB, what string) {
	if r := recover(); r != nil {
		t.Errorf("%s panicked: %v\n%s", what, r, debug.Stack())
	}
}

// run is t.Run with the subtest's panics caught (catch) and reported as
// panics of what.
func run(t *testing.T, name, what string, f func(t *testing.T)) bool {
	return t.Run(name, func(t *testing.T) {
		defer catch(t, what)
		f(t)
	})
}

// guarded runs f in a new goroutine with its panics caught (catch).
func guarded(t testing.TB, what string, f func()) {
	go func() {
		defer catch(t, what)
		f()
	}()
}

// async runs f in a new goroutine and returns a channel that receives nil
// when f returns, or an *extPanic naming what when f panics.
func async(what string, f func()) <-chan error {
	ch := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				ch <- &extPanic{what: what, v: r, stack: debug.Stack()}
			}
		}()
		f()
		ch <- nil
	}()
	return ch
}

// within waits up to d for ch (from async) and fails t now when nothing
// came (saying that what did not return within d) or a panic came.
func within(t *testing.T, ch <-chan error, d time.Duration, what string) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(d):
		t.Fatalf("%s: no return within %v", what, d)
	}
}
