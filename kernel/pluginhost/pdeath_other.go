//go:build !linux

package pluginhost

import "os/exec"

// dieWithHost does nothing outside Linux: SDK plugins watch their parent.
func dieWithHost(*exec.Cmd) {}
