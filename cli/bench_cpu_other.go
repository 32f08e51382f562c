//go:build !linux

package cli

import (
	"errors"
	"time"
)

// processCPUClock is Linux's only; elsewhere processCPU reads /proc.
func processCPUClock(int) (time.Duration, error) {
	return 0, errors.New("no per-process CPU clock on this platform")
}
