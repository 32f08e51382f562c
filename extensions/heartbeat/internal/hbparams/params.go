// Package hbparams reads the URL keys shared by the idle and dual heartbeat
// strategies: heartbeat.interval, including Dubbo's bare-number
// form heartbeat=3000, heartbeat.timeout, and heartbeat.ping.on.timeout,
// which none reads too.
package hbparams

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/airnode/airnode/spi"
)

// URL keys read by the heartbeat strategies.
const (
	KeyStrategy    = "heartbeat"              // strategy name, or Dubbo's bare interval in ms
	KeyInterval    = "heartbeat.interval"     // duration
	KeyTimeout     = "heartbeat.timeout"      // duration
	KeyRetries     = "heartbeat.retries"      // integer
	KeyPingTimeout = "heartbeat.ping.timeout" // duration
	// KeyPingOnTimeout turns the consumer's liveness check after silent
	// call timeouts (spi.TimeoutCheck) on or off: bool, default true.
	KeyPingOnTimeout = "heartbeat.ping.on.timeout"
)

// PingOnTimeout returns heartbeat.ping.on.timeout (default true), as an
// error prefixed by component when it is not a bool.
func PingOnTimeout(component string, u spi.URL) (bool, error) {
	on, err := u.Bool(KeyPingOnTimeout, true)
	if err != nil {
		return false, fmt.Errorf("%s: %w", component, err)
	}
	return on, nil
}

// IntervalWant is how every heartbeat.interval error states its bounds
// (serve's -p and plugins.yaml check say the same, kernel/config).
const IntervalWant = "a duration from 10ms to 24h"

// RetriesWant is how every heartbeat.retries error states its bounds:
// "an integer from 1 to 1000".
var RetriesWant = spi.IntRangeWant(1, 1000, "")

// Bounds and defaults of heartbeat.interval.
const (
	DefaultInterval = 60 * time.Second
	MinInterval     = 10 * time.Millisecond
	MaxInterval     = 24 * time.Hour
)

// Interval returns heartbeat.interval (default 60s). When the heartbeat key
// is a bare integer (Dubbo's heartbeat=3000), the integer is the interval in
// milliseconds, and giving heartbeat.interval as well with another value is
// an error naming both (the kernel's catalog normalizes the bare form into
// heartbeat.interval before Build, leaving both only when they differ). The result lies within
// [MinInterval, MaxInterval]; anything else is an error naming the key and
// the value. component prefixes errors ("heartbeat idle").
func Interval(component string, u spi.URL) (time.Duration, error) {
	key := KeyInterval
	v, ok := u.Param(KeyInterval)
	if s, bare := u.Param(KeyStrategy); bare {
		if _, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
			if ok { // the catalog's Normalize leaves both only when they differ
				a, errA := spi.ParseDuration(s)
				b, errB := spi.ParseDuration(v)
				if errA != nil || errB != nil || a != b {
					return 0, &spi.KeyError{Keys: []string{KeyStrategy, KeyInterval}, Values: []string{s, v},
						Msg: fmt.Sprintf("%s: %s=%s (Dubbo's bare interval, %v) and %s=%s give the heartbeat interval twice with different values: give one",
							component, KeyStrategy, s, a, KeyInterval, v)}
				}
			}
			key, v, ok = KeyStrategy, s, true
		}
	}
	if !ok {
		return DefaultInterval, nil
	}
	d, err := spi.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", component, &spi.ParamError{Key: key, Value: v, Want: spi.DurationWant(err)})
	}
	if d < MinInterval || d > MaxInterval {
		return 0, fmt.Errorf("%s: %w", component, &spi.ParamError{Key: key, Value: v, Want: IntervalWant})
	}
	return d, nil
}

// Duration returns the duration key of u, def when absent; malformed or
// not positive, the error is a *spi.ParamError prefixed by component.
func Duration(component string, u spi.URL, key string, def time.Duration) (time.Duration, error) {
	d, err := u.Duration(key, def)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", component, err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s: %w", component, &spi.ParamError{Key: key, Value: u.ParamOr(key, d.String()), Want: "a duration > 0"})
	}
	return d, nil
}

// DefaultRetries is heartbeat.retries' default (the idle strategy's).
const DefaultRetries = 3

// HelloWait is when a provider-side watch first looks for the consumer's
// heartbeat settings (spi.PeerHeartbeat), which arrive with the consumer's
// first ping right after connect: the first check runs after
// min(HelloWait, the watch's own period), later ones on the negotiated
// period.
const HelloWait = time.Second

// PeerCloseTimeout is how long a provider lets a channel stay silent before
// closing it, derived from the consumer's heartbeat settings (issue 4 item
// 7), so the consumer, which owns the connection, decides first and a
// black-holed channel does not linger for the provider's own default:
//
//   - dual: the consumer's heartbeat.timeout (default 3 × interval), as both
//     ends of Dubbo 2.7.0's design use one timeout;
//   - idle (or absent, or Dubbo's bare interval): the time the consumer
//     needs to give up, interval + retries × max(interval, ping.timeout),
//     plus a slack of max(interval, 1 s).
//
// ok is false for none, an unknown strategy or malformed values: the
// provider then keeps its own settings.
func PeerCloseTimeout(peer spi.URL) (d time.Duration, ok bool) {
	const component = "heartbeat peer"
	interval, err := Interval(component, peer)
	if err != nil {
		return 0, false
	}
	strategy, _ := peer.Param(KeyStrategy)
	if _, bare := strconv.ParseInt(strings.TrimSpace(strategy), 10, 64); bare == nil || strategy == "" {
		strategy = "idle"
	}
	switch strategy {
	case "dual":
		t, err := Duration(component, peer, KeyTimeout, 3*interval)
		if err != nil {
			return 0, false
		}
		return t, true
	case "idle":
		pt, err := Duration(component, peer, KeyPingTimeout, interval)
		if err != nil {
			return 0, false
		}
		retries, err := peer.Int(KeyRetries, DefaultRetries)
		if err != nil || retries < 1 || retries > 1000 {
			return 0, false
		}
		return interval + time.Duration(retries)*max(interval, pt) + max(interval, time.Second), true
	}
	return 0, false
}

// KeyMinPingInterval is the provider's ping-flood guard key, which its
// heartbeat hello advertises (exchange: a provider closes a connection
// pinged faster while idle).
const KeyMinPingInterval = "heartbeat.min.ping.interval"

// PingInterval returns how often a consumer's watch may ping ch: own, or
// the provider's advertised heartbeat.min.ping.interval when that is
// longer, so that a consumer configured to ping faster than its provider
// allows does not get its idle connection closed for "too many pings" and
// redialled over and over (gRPC's client doubles its keepalive after the
// server's too_many_pings the same way); the exchange warns of it once.
func PingInterval(ch spi.Channel, own time.Duration) time.Duration {
	if p, ok := ch.(spi.PeerHeartbeat); ok {
		if u, ok := p.PeerHeartbeat(); ok {
			if m, err := u.Duration(KeyMinPingInterval, 0); err == nil && m > own {
				return m
			}
		}
	}
	return own
}

// PeerTimeout returns PeerCloseTimeout of ch's peer when ch carries the
// consumer's settings (spi.PeerHeartbeat), else own. A consumer that asked
// to ping faster than this provider's minimum (ch's MinPingInterval, the
// exchange's ping-flood guard) pings at the minimum (PingInterval): the
// bound stretches by the same factor. It is at most PeerTimeoutCap(own).
func PeerTimeout(ch spi.Channel, own time.Duration) (d time.Duration, negotiated bool) {
	if p, ok := ch.(spi.PeerHeartbeat); ok {
		if u, ok := p.PeerHeartbeat(); ok {
			if d, ok := PeerCloseTimeout(u); ok {
				if m, ok := ch.(interface{ MinPingInterval() time.Duration }); ok {
					if iv, err := Interval("heartbeat peer", u); err == nil {
						d = Stretch(d, iv, m.MinPingInterval())
					}
				}
				return min(d, PeerTimeoutCap(own)), true
			}
		}
	}
	return own, false
}

// PeerCapFactor and PeerCapFloor bound the silence a provider allows a
// consumer's heartbeat settings (PeerTimeoutCap).
const (
	PeerCapFactor = 4
	PeerCapFloor  = 5 * time.Minute
)

// PeerTimeoutCap is the longest a provider whose own heartbeat.timeout is
// own keeps a silent connection, whatever the consumer's heartbeat hello
// asks: the larger of PeerCapFactor × own and PeerCapFloor (5 minutes,
// what a consumer with the default idle settings needs). A hello is the
// consumer's word, and any peer that reaches the port may send one:
// heartbeat.interval=1h kept a silent connection 5 hours, with whatever
// it pinned (tester49 finding 8).
func PeerTimeoutCap(own time.Duration) time.Duration {
	return max(PeerCapFactor*own, PeerCapFloor)
}

// StretchNote returns "" when a consumer pings at its own interval (asked),
// else the clause its close reasons start with, naming the interval used:
// "pinging every 1s, the provider's heartbeat.min.ping.interval, not
// heartbeat.interval 500ms; ".
func StretchNote(asked, pinged time.Duration) string {
	if pinged == asked {
		return ""
	}
	return fmt.Sprintf("pinging every %v, the provider's %s, not %s %v; ", pinged, KeyMinPingInterval, KeyInterval, asked)
}

// PeerStrategy returns the heartbeat strategy ch's peer runs, from its
// settings (spi.PeerHeartbeat): "idle" for an absent key or Dubbo's bare
// interval, "" until they arrived.
func PeerStrategy(ch spi.Channel) string {
	p, ok := ch.(spi.PeerHeartbeat)
	if !ok {
		return ""
	}
	u, ok := p.PeerHeartbeat()
	if !ok {
		return ""
	}
	s, _ := u.Param(KeyStrategy)
	s = strings.TrimSpace(s)
	if s == "" || strings.Trim(s, "0123456789") == "" {
		return "idle"
	}
	return s
}

// Stretch returns d scaled by pinged/asked when the pings come every
// pinged instead of every asked (a provider's minimum over the consumer's
// interval), else d.
func Stretch(d, asked, pinged time.Duration) time.Duration {
	if asked <= 0 || pinged <= asked {
		return d
	}
	return time.Duration(float64(d) * float64(pinged) / float64(asked))
}
