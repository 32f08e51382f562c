// Package demo is the built-in demo.Echo service that `airnode serve`
// exports (DESIGN §8): Echo, Sleep, Payload, Fail and Info. It is safe for
// concurrent use and owns no goroutine.
package demo
