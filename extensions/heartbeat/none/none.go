// Package none is the "none" heartbeat strategy: Watch does nothing, so a
// channel's liveness rests on the transport alone (EOF, reset). It has no
// URL keys besides heartbeat=none, starts no goroutine and no timer.
package none

import "github.com/airnode/airnode/spi"

// Name is the extension name, selected by heartbeat=none.
const Name = "none"

// Builder builds the no-op heartbeat. The zero value is ready to use.
type Builder struct{}

// Name returns "none".
func (Builder) Name() string { return Name }

// Build returns the no-op Heartbeat; it never fails.
func (Builder) Build(spi.URL) (spi.Heartbeat, error) { return Heartbeat{}, nil }

// Heartbeat watches nothing.
type Heartbeat struct{}

// Watch returns a stop function that does nothing.
func (Heartbeat) Watch(spi.Channel) (stop func()) { return func() {} }

var (
	_ spi.HeartbeatBuilder = Builder{}
	_ spi.Heartbeat        = Heartbeat{}
)
