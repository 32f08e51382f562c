// Package demo is the built-in demo.Echo service that `airnode serve`
// exports: Echo, Sleep, Payload, Fail and Info. It is a test
// service: Info tells any caller the host name and pid, Payload answers up
// to the provider's payload limit (LimitPayload; at most MaxPayload), and
// Sleep waits at most MaxSleep (1 minute); serve leaves it out with
// --demo=false. It is safe for concurrent use and owns no goroutine.
package demo
