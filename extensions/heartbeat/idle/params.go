package idle

import (
	"fmt"
	"time"

	"github.com/airnode/airnode/extensions/heartbeat/internal/hbparams"
	"github.com/airnode/airnode/spi"
)

const component = "heartbeat idle"

// Defaults.
const (
	DefaultRetries = 3                // heartbeat.retries
	MaxRetries     = 1000             // heartbeat.retries upper bound
	timeoutSlack   = 20 * time.Second // default heartbeat.timeout = 3×interval + timeoutSlack
)

// Config is the idle strategy's settings, read from the URL by Builder.Build.
type Config struct {
	Interval    time.Duration // heartbeat.interval: read-idle time before a ping, and the ping period
	PingTimeout time.Duration // heartbeat.ping.timeout: how long a ping may wait for its answer
	Retries     int           // heartbeat.retries: failed pings before the consumer closes the channel
	Timeout     time.Duration // heartbeat.timeout: provider closes after this long with nothing read or written
	// NoPingOnTimeout is heartbeat.ping.on.timeout=false: no ping when a
	// call times out with nothing read since it was sent (TimeoutCheck).
	// The zero value, like the key's default, leaves the check on.
	NoPingOnTimeout bool
}

// ParseConfig reads and validates the idle keys of u.
func ParseConfig(u spi.URL) (Config, error) {
	var c Config
	var err error
	if c.Interval, err = hbparams.Interval(component, u); err != nil {
		return Config{}, err
	}
	if c.PingTimeout, err = hbparams.Duration(component, u, hbparams.KeyPingTimeout, c.Interval); err != nil {
		return Config{}, err
	}
	if c.Timeout, err = hbparams.Duration(component, u, hbparams.KeyTimeout, 3*c.Interval+timeoutSlack); err != nil {
		return Config{}, err
	}
	on, err := hbparams.PingOnTimeout(component, u)
	if err != nil {
		return Config{}, err
	}
	c.NoPingOnTimeout = !on
	retries, err := u.Int(hbparams.KeyRetries, DefaultRetries)
	if err != nil || retries < 1 || retries > MaxRetries {
		return Config{}, fmt.Errorf("%s: %w", component, &spi.ParamError{Key: hbparams.KeyRetries, Value: u.ParamOr(hbparams.KeyRetries, fmt.Sprint(retries)), Want: hbparams.RetriesWant})
	}
	c.Retries = int(retries)
	if c.Timeout <= c.Interval {
		return Config{}, fmt.Errorf("%s: %w", component, &spi.ParamError{Key: hbparams.KeyTimeout, Value: u.ParamOr(hbparams.KeyTimeout, c.Timeout.String()),
			Want: fmt.Sprintf("a duration longer than %s (%v), or the provider closes idle channels the consumer is still pinging", hbparams.KeyInterval, c.Interval)})
	}
	return c, nil
}
