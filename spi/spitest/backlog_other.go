//go:build !unix

package spitest

import "net"

// shrinkBacklog is not available on this platform.
func shrinkBacklog(net.Listener) bool { return false }
