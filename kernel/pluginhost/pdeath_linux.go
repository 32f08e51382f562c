package pluginhost

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// dieWithHost asks Linux to SIGKILL the plugin when the host dies
// (prctl PR_SET_PDEATHSIG), so that plugins not built with the SDK do not
// outlive a host killed by SIGKILL either. The signal fires when the OS
// thread that started the plugin exits, which in Go happens only to a
// thread whose goroutine exits while locked to it; a plugin killed that way
// is restarted by its supervisor like any crash. SDK plugins also watch
// their parent themselves.
//
// It also puts the plugin in a process group of its own (Setpgid), whose
// id is the plugin's PID, so that killGroup ends a wrapper script's
// children with it (go-plugin's pattern): a child that inherited the
// plugin's stdout or stderr otherwise keeps go-plugin reading them, and
// the host waiting, until it exits. A terminal's Ctrl-C then reaches the
// host only, which closes its plugins itself.
func dieWithHost(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// killGroup sends SIGKILL to the process group pid leads (see
// dieWithHost). A group with no process left is no error.
func killGroup(pid int) {
	if pid > 0 {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// exitedUnreaped reports whether process pid, a child of the host, has
// exited, without reaping it (waitid WNOWAIT): its exec.Cmd's Wait still
// gets its status.
func exitedUnreaped(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err != nil || info.Signo != 0 // SIGCHLD when it exited; an error: nothing left to wait for
}

// processExited reports whether process pid, a child of the host, has
// exited (exitedUnreaped), for restartBroken.
func processExited(pid int) bool { return exitedUnreaped(pid) }
