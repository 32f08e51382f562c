package dual

import (
	"fmt"
	"time"

	"github.com/airnode/airnode/extensions/heartbeat/internal/hbparams"
	"github.com/airnode/airnode/spi"
)

const component = "heartbeat dual"

// Config is the dual strategy's settings, read from the URL by Builder.Build.
type Config struct {
	Interval time.Duration // heartbeat.interval: idle time (read or write) before a ping
	Timeout  time.Duration // heartbeat.timeout: read silence before reconnect (consumer) or close (provider)
	// NoPingOnTimeout is heartbeat.ping.on.timeout=false: no ping when a
	// call times out with nothing read since it was sent (TimeoutCheck).
	// The zero value, like the key's default, leaves the check on.
	NoPingOnTimeout bool
}

// ParseConfig reads and validates the dual keys of u. A timeout under
// twice the interval is rejected, as Dubbo 2.7.0 does: with less, one
// lost heartbeat already kills the channel.
func ParseConfig(u spi.URL) (Config, error) {
	var c Config
	var err error
	if c.Interval, err = hbparams.Interval(component, u); err != nil {
		return Config{}, err
	}
	if c.Timeout, err = hbparams.Duration(component, u, hbparams.KeyTimeout, 3*c.Interval); err != nil {
		return Config{}, err
	}
	on, err := hbparams.PingOnTimeout(component, u)
	if err != nil {
		return Config{}, err
	}
	c.NoPingOnTimeout = !on
	if c.Timeout < 2*c.Interval {
		return Config{}, fmt.Errorf("%s: %w", component, &spi.ParamError{Key: hbparams.KeyTimeout, Value: u.ParamOr(hbparams.KeyTimeout, c.Timeout.String()),
			Want: fmt.Sprintf("a duration of at least 2 × %s (%v), i.e. ≥ %v", hbparams.KeyInterval, c.Interval, 2*c.Interval)})
	}
	return c, nil
}
