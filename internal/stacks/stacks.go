// Package stacks counts this process's goroutines by what their stacks
// hold, for tests that check which goroutines a shutdown leaves behind.
package stacks

import (
	"bytes"
	"runtime"
)

// Count returns how many goroutines have a stack containing has and not
// containing hasNot ("" excludes none): Count("exchange.(*workerPool).worker(",
// "(*holder).Hold(") counts the idle provider workers. It reads every
// goroutine's stack (runtime.Stack, up to 4 MiB of text).
func Count(has, hasNot string) int {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte(has)) && (hasNot == "" || !bytes.Contains(g, []byte(hasNot))) {
			n++
		}
	}
	return n
}
