package spi

import "time"

// monoBase anchors Mono: a time.Now taken when the process starts.
var monoBase = time.Now()

// Mono reads the monotonic clock as the time since the process's clock
// base (its start): nanoseconds, never zero after the first one. It is one
// clock read without the wall clock, about half the cost of time.Now.
//
// The layers of a call share their readings through it: the innermost
// layer that times a call stamps Result.Ended, and on the provider the
// exchange stamps Invocation.Began, so that the filters and invokers
// around them time the call without reading the clock again. A read
// costs 30-100 ns on a virtual machine, and a call once read the clock
// six or seven times on each side. A Mono reading means
// nothing in another process.
func Mono() time.Duration { return time.Since(monoBase) }

// MonoTime returns the time (with a monotonic reading) of the Mono
// reading d, for APIs that take a time.Time (Stats.EndAt).
func MonoTime(d time.Duration) time.Time { return monoBase.Add(d) }
