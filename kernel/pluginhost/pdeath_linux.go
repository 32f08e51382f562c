package pluginhost

import (
	"os/exec"
	"syscall"
)

// dieWithHost asks Linux to SIGKILL the plugin when the host dies
// (prctl PR_SET_PDEATHSIG), so that plugins not built with the SDK do not
// outlive a host killed by SIGKILL either. The signal fires when the OS
// thread that started the plugin exits, which in Go happens only to a
// thread whose goroutine exits while locked to it; a plugin killed that way
// is restarted by its supervisor like any crash. SDK plugins also watch
// their parent themselves.
func dieWithHost(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
