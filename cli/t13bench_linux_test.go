package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY opens a pseudo-terminal pair through /dev/ptmx (unlockpt and
// ptsname by ioctl; the module has no pty package and this test adds no
// dependency for it).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Skipf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Skipf("ptsname: %v", e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open /dev/pts/%d: %v", n, err)
	}
	return m, s
}

// tester13 finding 2: the progress bar is drawn when stderr is a terminal.
// stderr is wrapped in a redactingWriter, which the *os.File check never
// saw through, so the bar never appeared. Here bench's stderr is a real
// pseudo-terminal: the bar's "\r\033[K" redraws reach it; with a pipe they
// do not (TestBench_PayloadSizesAndSummary).
func TestT13_2_ProgressBarOnATerminal(t *testing.T) {
	m, s := openPTY(t)
	defer m.Close()
	if !isTerminal(redactingWriter{s}) || !isTerminal(s) || isTerminal(redactingWriter{&bytes.Buffer{}}) || isTerminal(nil) {
		t.Fatal("isTerminal does not see the terminal through redactingWriter")
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	if isTerminal(redactingWriter{pw}) || progressWriter(redactingWriter{pw}) != nil {
		t.Fatal("a pipe taken for a terminal")
	}
	pw.Close()

	p := serve(t, "127.0.0.1:0", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "bench", p.url("demo.Echo"), "--duration", "1s", "-c", "2")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, s
	var tty bytes.Buffer
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = io.Copy(&tty, m) }) // ends with EIO once the slave is closed
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench: %v\n%s", err, out.String())
	}
	s.Close()
	wg.Wait()
	if got := tty.String(); !strings.Contains(got, "\r\033[Kairnode 100/100 B c=2 [") || !strings.Contains(got, "calls/s") {
		t.Fatalf("terminal got %q; want the progress bar", got)
	}
	if strings.Contains(out.String(), "\r") {
		t.Fatalf("the bar reached stdout: %q", out.String())
	}
}
