package pluginhost

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin/runner"
)

// cmdRunner runs a plugin's process for go-plugin (ClientConfig.
// RunnerFunc), as go-plugin's own command runner does, but its Kill of a
// process whose stdout has closed first waits up to exitWait for the
// process to exit by itself: go-plugin kills the process as soon as its
// stdout closes before the handshake, and one that closes stdout just
// before its exit (/bin/sleep without an operand: coreutils'
// close_stdout) was then reported killed by the host's SIGKILL, not
// with its own exit status (tester66 F15). The process's stderr is read
// by a stderrPump, started with the process; go-plugin's own stderr
// reader gets a pipe that carries nothing and ends when the pump has read
// the process's stderr to its end (go-plugin waits for that before it
// reaps the process).
type cmdRunner struct {
	logger hclog.Logger
	cmd    *exec.Cmd
	stdout *eofReader
	stderr io.ReadCloser // the process's
	pump   *stderrPump

	// toPlugin is what go-plugin reads as the process's stderr; closed by
	// the pump (fromPump) when it is done
	toPlugin *io.PipeReader
	fromPump *io.PipeWriter

	path string
	pid  int
}

// exitWait bounds how long Kill waits for a process whose stdout closed
// to exit by itself.
const exitWait = 200 * time.Millisecond

// newCmdRunner prepares cmd, whose stderr goes to w's logger and tail (a
// stderrPump); logger is go-plugin's, writing to w.
func newCmdRunner(logger hclog.Logger, cmd *exec.Cmd, w slogWriter) (*cmdRunner, error) {
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	return &cmdRunner{logger: logger, cmd: cmd, stdout: &eofReader{r: stdout}, stderr: stderr,
		pump:     &stderrPump{rec: logger.Named(filepath.Base(cmd.Path)), log: w.l, tail: w.tail, handover: w.handover},
		toPlugin: pr, fromPump: pw, path: cmd.Path}, nil
}

// Start starts the process and logs go-plugin's "plugin started" record
// with its pid, which launch reads (startTail.pid).
func (c *cmdRunner) Start(context.Context) error {
	c.logger.Debug("starting plugin", "path", c.cmd.Path, "args", c.cmd.Args)
	if err := c.cmd.Start(); err != nil {
		_ = c.fromPump.Close()
		return err
	}
	go c.pump.run(c.stderr, c.fromPump) // ends with the process's stderr, before go-plugin reaps it
	c.pid = c.cmd.Process.Pid
	c.logger.Debug("plugin started", "path", c.path, "pid", c.pid)
	return nil
}

func (c *cmdRunner) Wait(context.Context) error { return c.cmd.Wait() }

// Kill sends SIGKILL to the process, first waiting up to exitWait for it
// to exit by itself when its stdout has closed.
func (c *cmdRunner) Kill(context.Context) error {
	if c.cmd.Process == nil {
		return nil
	}
	if c.stdout.eof.Load() {
		deadline := time.Now().Add(exitWait)
		for !exitedUnreaped(c.pid) && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
	}
	if err := c.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

func (c *cmdRunner) Stdout() io.ReadCloser           { return c.stdout }
func (c *cmdRunner) Stderr() io.ReadCloser           { return c.toPlugin }
func (c *cmdRunner) Name() string                    { return c.path }
func (c *cmdRunner) ID() string                      { return strconv.Itoa(c.pid) }
func (c *cmdRunner) Diagnose(context.Context) string { return "" }

func (c *cmdRunner) PluginToHost(network, addr string) (string, string, error) {
	return network, addr, nil
}

func (c *cmdRunner) HostToPlugin(network, addr string) (string, string, error) {
	return network, addr, nil
}

// eofReader is a plugin's stdout, noting when it reached its end.
type eofReader struct {
	r   io.ReadCloser
	eof atomic.Bool
}

func (e *eofReader) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if err != nil {
		e.eof.Store(true)
	}
	return n, err
}

func (e *eofReader) Close() error { return e.r.Close() }

var _ runner.Runner = (*cmdRunner)(nil)
