package cli

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// processCPUClock returns the CPU time process pid has used so far, in
// nanoseconds: its CPU-time clock (clock_gettime of the clock
// clock_getcpuclockid(3) returns for pid, a process CPUCLOCK_SCHED: the
// scheduler's runtime of every thread of the process, exited threads
// included, as CLOCK_PROCESS_CPUTIME_ID is for the caller). Linux lets
// any process read another's in the same PID namespace. /proc/PID/stat's
// utime+stime count 10 ms ticks, which on a run of a few hundred
// milliseconds read 0 or one tick (tester36 F9); /proc/PID/schedstat's
// first field has nanoseconds but of the main thread only.
func processCPUClock(pid int) (time.Duration, error) {
	if pid <= 0 || pid >= 1<<28 { // clockid_t is 32 bits: (^pid)<<3 | CPUCLOCK_SCHED
		return 0, errors.New("no CPU clock for this pid")
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(int32((^pid)<<3|2), &ts); err != nil {
		return 0, err
	}
	return time.Duration(ts.Nano()), nil
}
