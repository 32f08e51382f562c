//go:build linux

package rawsock

import (
	"syscall"
	"unsafe"
)

// A transfer of up to maxRawIO bytes is a raw system call
// (syscall.RawSyscall): without the scheduler's system-call hand-off
// (entersyscall/exitsyscall), which a read or write that cannot block
// (the socket is non-blocking) and is short does not need. That hand-off
// also wakes the runtime's sysmon thread whenever it had gone to sleep
// because every P was idle (runtime/proc.go, reentersyscall ->
// entersyscall_sysmon), which a connection with one call at a time does
// between calls: at one caller, `perf stat -e 'syscalls:sys_enter_*'` on
// an airnode tcp provider counted 0.44-0.60 futex and 0.52-0.64 nanosleep
// calls per call, all of them sysmon's wake-up and its next sleep (raw
// system calls: 0.07 and 0.04). A longer transfer keeps the hand-off,
// which lets sysmon give the P to another thread while the kernel copies
// (a raw system call holds it): with every transfer raw, 10,000 callers
// whose batched requests (up to 256 KiB a write) held the consumer's P
// did 103k calls/s against 116k (5 alternated pairs). Go's own net
// package uses the hand-off for every transfer.

func rawRead(fd uintptr, b []byte) (int, error) { return transfer(syscall.SYS_READ, fd, b) }

func rawWrite(fd uintptr, b []byte) (int, error) { return transfer(syscall.SYS_WRITE, fd, b) }

// transfer is read(2) or write(2) (trap) of b on fd: a raw system call
// up to maxRawIO bytes, syscall.Syscall above.
func transfer(trap, fd uintptr, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	var n uintptr
	var e syscall.Errno
	if len(b) <= maxRawIO {
		n, _, e = syscall.RawSyscall(trap, fd, uintptr(p), uintptr(len(b)))
	} else {
		n, _, e = syscall.Syscall(trap, fd, uintptr(p), uintptr(len(b)))
	}
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// rawWritev is writev(2) of v's first buffers, up to four non-empty ones.
func rawWritev(fd uintptr, v [][]byte) (int, error) {
	var iov [4]syscall.Iovec
	k, size := 0, 0
	for _, b := range v {
		if len(b) == 0 {
			continue
		}
		if k == len(iov) {
			break
		}
		iov[k].Base = &b[0]
		iov[k].SetLen(len(b))
		k++
		size += len(b)
	}
	if k == 0 {
		return 0, nil
	}
	var n uintptr
	var e syscall.Errno
	if size <= maxRawIO {
		n, _, e = syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(k))
	} else {
		n, _, e = syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(k))
	}
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}
