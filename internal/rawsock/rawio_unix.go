//go:build unix && !linux

package rawsock

import "syscall"

func rawRead(fd uintptr, b []byte) (int, error) { return syscall.Read(int(fd), b) }

func rawWrite(fd uintptr, b []byte) (int, error) { return syscall.Write(int(fd), b) }

// rawWritev writes v's first non-empty buffer off Linux: callers loop
// over partial writes.
func rawWritev(fd uintptr, v [][]byte) (int, error) {
	for _, b := range v {
		if len(b) > 0 {
			return syscall.Write(int(fd), b)
		}
	}
	return 0, nil
}
