//go:build !linux

package pluginhost

import "os/exec"

// dieWithHost does nothing outside Linux: SDK plugins watch their parent.
func dieWithHost(*exec.Cmd) {}

// killGroup does nothing outside Linux, where plugins share the host's
// process group: go-plugin kills the plugin process itself.
func killGroup(int) {}

// exitedUnreaped reports false outside Linux: Kill does not wait there.
func exitedUnreaped(int) bool { return true }

// processExited reports false outside Linux: restartBroken counts on the
// process's client (its Done) to tell an exit.
func processExited(int) bool { return false }
