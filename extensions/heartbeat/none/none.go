package none

import (
	"time"

	"github.com/airnode/airnode/extensions/heartbeat/internal/hbparams"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, selected by heartbeat=none.
const Name = "none"

const component = "heartbeat none"

// Builder builds the no-op heartbeat. The zero value is ready to use.
type Builder struct{}

// Name returns "none".
func (Builder) Name() string { return Name }

// Build reads heartbeat.ping.on.timeout (default true); it fails only when
// that is not a bool.
func (Builder) Build(u spi.URL) (spi.Heartbeat, error) {
	on, err := hbparams.PingOnTimeout(component, u)
	if err != nil {
		return nil, err
	}
	return Heartbeat{NoPingOnTimeout: !on}, nil
}

// Keys describes the URL keys Build reads (spi.KeyDescriber).
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{hbparams.PingOnTimeoutKey("")}
}

// Heartbeat watches nothing. Its zero value keeps the liveness check after
// silent call timeouts on.
type Heartbeat struct {
	// NoPingOnTimeout is heartbeat.ping.on.timeout=false: no liveness
	// check after silent call timeouts either.
	NoPingOnTimeout bool
}

// Watch returns a stop function that does nothing.
func (Heartbeat) Watch(spi.Channel) (stop func()) { return func() {} }

// TimeoutCheck implements spi.TimeoutCheck: on unless
// heartbeat.ping.on.timeout=false, the ping bounded by the call's timeout
// alone (max(1 s, timeout)).
func (h Heartbeat) TimeoutCheck() (maxWait time.Duration, on bool) {
	return 0, !h.NoPingOnTimeout
}

var (
	_ spi.HeartbeatBuilder = Builder{}
	_ spi.Heartbeat        = Heartbeat{}
	_ spi.TimeoutCheck     = Heartbeat{}
	_ spi.KeyDescriber     = Builder{}
)
