//go:build unix

package netaccept

import "syscall"

func openFileLimit() (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	n := uint64(rl.Cur)
	return n, n < 1<<62 // RLIM_INFINITY is -1 on Linux, 1<<63-1 on Darwin
}
