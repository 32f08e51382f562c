package cli

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"syscall"

	"github.com/airnode/airnode/kernel/extension"
)

// The signals a long-running command (serve, bench, registry watch) meets
// under supervisors and log pipelines, besides SIGINT and SIGTERM
// (serveSignals):
//
//   - SIGPIPE: the process reading stderr went away (`serve 2>&1 |
//     logger`, a restarting log shipper). Go kills a program at its next
//     write to fd 1 or 2 unless it handles SIGPIPE (os/signal: "SIGPIPE");
//     handlePipe makes such a write fail with EPIPE instead, and
//     lossyWriter drops the lines it cannot write.
//   - SIGHUP (serve): sent when an ssh session closes, and logrotate's
//     conventional `postrotate kill -HUP`. serve reopens its access-log
//     files and keeps serving.
//   - SIGQUIT (serve): `kill -3`, the JVM's thread dump. serve writes
//     every goroutine's stack to stderr and keeps serving, as a JVM does;
//     Go's own dump-and-exit stays on SIGABRT (kill -ABRT, GOTRACEBACK
//     governs the detail).

// handlePipe makes a write to a closed pipe on stdout or stderr fail
// with EPIPE instead of killing the process with SIGPIPE (exit 141), for
// the rest of the process's life: the runtime kills only a program that
// neither ignores nor watches SIGPIPE (os/signal). It watches rather than
// ignores, so that processes it starts (plugins) do not inherit an
// ignored SIGPIPE. Idempotent.
func handlePipe() {
	pipeOnce.Do(func() {
		// the runtime drops a signal a full channel cannot take: nobody
		// needs to read it
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	})
}

var pipeOnce sync.Once

// lossyWriter is the process's stderr (main wraps os.Stderr in it): a
// line it cannot write (EPIPE once its reader went away, with
// handlePipe; ENOSPC; EIO on a closed terminal) is dropped and counted,
// never returned to the logger, which has nowhere else to say it. When a
// write works again (a full disk freed), a line saying how many were
// lost comes first. Lines written while a pipe's reader is gone are lost:
// a pipe does not come back.
type lossyWriter struct {
	w io.Writer

	mu   sync.Mutex
	lost int64 // lines dropped since the last write that worked
	err  error // the first error of those
}

// Unwrap returns the writer it writes to (isTerminal looks through it).
func (l *lossyWriter) Unwrap() io.Writer { return l.w }

// Write writes p whole or counts it lost; it always reports len(p), nil.
func (l *lossyWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost > 0 {
		note := fmt.Sprintf("airnode: %d log lines lost: writing stderr failed: %v\n", l.lost, l.err)
		if _, err := io.WriteString(l.w, note); err != nil {
			l.lost++
			return len(p), nil
		}
		l.lost, l.err = 0, nil
	}
	if _, err := l.w.Write(p); err != nil {
		if l.lost == 0 {
			l.err = err
		}
		l.lost++
	}
	return len(p), nil
}

// serveSignalWatch handles serve's SIGHUP and SIGQUIT (and SIGPIPE,
// handlePipe) from the start of the command: a signal before the catalogs
// exist is handled too (HUP then has no access log to reopen).
type serveSignalWatch struct {
	logger *slog.Logger
	stderr io.Writer
	sigs   chan os.Signal
	done   chan struct{}
	exited chan struct{}

	mu  sync.Mutex
	cat *extension.Catalogs // set by use; nil before
}

// watchServeSignals starts handling SIGPIPE, SIGHUP and SIGQUIT for serve,
// logging to logger and dumping goroutines to stderr. Its stop method
// stops the handling and waits for the goroutine it started.
func watchServeSignals(logger *slog.Logger, stderr io.Writer) *serveSignalWatch {
	handlePipe()
	w := &serveSignalWatch{logger: logger, stderr: stderr, sigs: make(chan os.Signal, 4),
		done: make(chan struct{}), exited: make(chan struct{})}
	signal.Notify(w.sigs, syscall.SIGHUP, syscall.SIGQUIT)
	go w.run()
	return w
}

// use makes SIGHUP reopen the access logs of cat's accesslog filter.
func (w *serveSignalWatch) use(cat *extension.Catalogs) {
	w.mu.Lock()
	w.cat = cat
	w.mu.Unlock()
}

func (w *serveSignalWatch) run() {
	defer close(w.exited)
	for {
		select {
		case s := <-w.sigs:
			switch s {
			case syscall.SIGHUP:
				w.hup()
			case syscall.SIGQUIT:
				w.quit()
			}
		case <-w.done:
			return
		}
	}
}

// stop stops handling SIGHUP and SIGQUIT (they get Go's default action
// again) and waits for the handling goroutine. SIGPIPE stays handled.
func (w *serveSignalWatch) stop() {
	signal.Stop(w.sigs)
	close(w.done)
	<-w.exited
}

// hup reopens the bundled accesslog filter's files (accesslog.Builder's
// Reopen) and says so in one line; serve keeps running.
func (w *serveSignalWatch) hup() {
	w.mu.Lock()
	cat := w.cat
	w.mu.Unlock()
	b := accessLogBuilder(cat)
	if b == nil {
		w.logger.Info("airnode serve: SIGHUP: no access-log file to reopen; serving on (SIGINT or SIGTERM stops)")
		return
	}
	n, err := b.Reopen()
	if err != nil {
		w.logger.Error("airnode serve: SIGHUP: access-log files reopened, some failed (they go on writing the file they had open)", "files", n, "err", err)
		return
	}
	w.logger.Info("airnode serve: SIGHUP: access-log files reopened; serving on (SIGINT or SIGTERM stops)", "files", n)
}

// quit writes every goroutine's stack to stderr, in the runtime's
// traceback format, between two marker lines; serve keeps running.
func (w *serveSignalWatch) quit() {
	var buf bytes.Buffer
	buf.WriteString("airnode: serve: SIGQUIT: goroutine dump (serve keeps running; kill -ABRT for Go's dump and exit)\n")
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 2)
	buf.WriteString("airnode: serve: end of goroutine dump\n")
	_, _ = w.stderr.Write(buf.Bytes())
}
