// Package integration holds the heartbeat strategies' tests against real
// parts: the kernel's exchange over the smux transport on loopback TCP, a
// black-holing TCP proxy, and a provider in a child process that can be
// stopped with SIGSTOP (scenarios H1-H4). It has no
// non-test code; TestHeartbeatComparison prints the idle-versus-dual table
// of docs/heartbeat.md when AIRNODE_HEARTBEAT_COMPARISON=1.
package integration
