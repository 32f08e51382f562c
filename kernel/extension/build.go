package extension

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Build calls build, the Build of the extension name of point (a
// builder's Build, or anything else that makes a value out of a third
// party's code), and is the one rule for its outcome at every point:
//
//   - a panic in build is recovered and returned as a *PanicError,
//     `loadbalance "panicky": Build panicked: boom`, instead of crashing the
//     process (Dubbo's ExtensionLoader likewise turns a failed
//     instantiation into an IllegalStateException naming the extension);
//   - an error is returned prefixed `point "name": ` unless its message
//     already starts with the point or the extension name followed by a
//     space or a colon (the bundled heartbeats say "heartbeat idle: ..."),
//     so every point's Build errors name the extension once.
//
// The kernel calls every builder through Build (Refer, Export, the
// registries, the connection settings) and so does Explain. R is what
// build makes (spi.LoadBalance, spi.Filter, ...); on error it is R's zero
// value.
func Build[R any](point, name string, build func() (R, error)) (r R, err error) {
	defer func() {
		if v := recover(); v != nil {
			var zero R
			r, err = zero, &PanicError{Point: point, Name: name, Method: "Build", Value: v, Stack: debug.Stack()}
		}
	}()
	r, err = build()
	if err != nil && !namesItself(err, point, name) {
		err = fmt.Errorf("%s %q: %w", point, name, err)
	}
	return r, err
}

// PanicError is a panic recovered from an extension's method (Build):
//
//	loadbalance "panicky": Build panicked: Build exploded
//
// Value is what was passed to panic (an error in it is reachable through
// errors.Is and errors.As); Stack is the panicking goroutine's stack, for
// a log, not for the message.
type PanicError struct {
	Point  string // "loadbalance"
	Name   string // extension name
	Method string // "Build"
	Value  any    // what was passed to panic
	Stack  []byte // the panicking goroutine's stack (runtime/debug.Stack)
}

// Error says `loadbalance "p2c": Build panicked: VALUE`; the stack is not
// in it.
func (e *PanicError) Error() string {
	return fmt.Sprintf("%s %q: %s panicked: %v", e.Point, e.Name, e.Method, e.Value)
}

// Unwrap returns the panic value when it is an error, else nil.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// namesItself reports whether err's message already starts with the point
// or the extension name as a word (followed by a space or a colon, or
// ending there): an extension prefixing its own errors, so Build and
// Explain do not name it twice.
func namesItself(err error, point, name string) bool {
	m := err.Error()
	word := func(w string) bool {
		if w == "" || !strings.HasPrefix(m, w) {
			return false
		}
		return len(m) == len(w) || m[len(w)] == ' ' || m[len(w)] == ':'
	}
	return word(point) || word(name)
}
