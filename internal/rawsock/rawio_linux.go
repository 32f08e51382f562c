//go:build linux

package rawsock

import (
	"syscall"
	"unsafe"
)

// rawRead is read(2) through syscall.RawSyscall: without the scheduler's
// system-call hand-off (entersyscall/exitsyscall), which a read that
// cannot block (the socket is non-blocking) does not need. That hand-off
// also wakes the runtime's sysmon thread whenever it had gone to sleep
// because every P was idle (runtime/proc.go, reentersyscall ->
// entersyscall_sysmon), which a connection with one call at a time does
// between calls: at one caller, `perf stat -e 'syscalls:sys_enter_*'` on
// an airnode tcp provider counted 0.44-0.60 futex and 0.52-0.64 nanosleep
// calls per call, all of them sysmon's wake-up and its next sleep (raw
// system calls: 0.07 and 0.04). Go's own net package reads with Syscall.
func rawRead(fd uintptr, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(p), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// rawWrite is write(2) through syscall.RawSyscall, for the reason rawRead
// gives.
func rawWrite(fd uintptr, b []byte) (int, error) {
	var p unsafe.Pointer
	if len(b) > 0 {
		p = unsafe.Pointer(&b[0])
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(p), uintptr(len(b)))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}

// rawWritev is writev(2) of v's first buffers (up to four, up to maxRawIO
// bytes in all) through syscall.RawSyscall, for the reason rawRead gives.
func rawWritev(fd uintptr, v [][]byte) (int, error) {
	var iov [4]syscall.Iovec
	k, size := 0, 0
	for _, b := range v {
		if len(b) == 0 {
			continue
		}
		if k == len(iov) || size == maxRawIO {
			break
		}
		n := min(len(b), maxRawIO-size)
		iov[k].Base = &b[0]
		iov[k].SetLen(n)
		k++
		size += n
	}
	if k == 0 {
		return 0, nil
	}
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(k))
	if e != 0 {
		return -1, e
	}
	return int(n), nil
}
