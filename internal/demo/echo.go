package demo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// Interface is the service interface name demo.Echo is exported under.
const Interface = "demo.Echo"

// MaxPayload bounds Payload's n: 1 GiB. The exchange's payload limit
// (8 MiB by default) rejects far smaller responses; this bound only keeps a
// typo from allocating the machine's memory.
const MaxPayload = 1 << 30

// Echo is the demo service. Create it with New.
type Echo struct {
	node    string
	weight  int
	started time.Time
}

// Info describes the provider process that answered.
type Info struct {
	Node    string    `json:"node" msgpack:"node"`       // the node's name (host name by default)
	PID     int       `json:"pid" msgpack:"pid"`         // provider process id
	Started time.Time `json:"started" msgpack:"started"` // when New was called
	Weight  int       `json:"weight" msgpack:"weight"`   // the provider's exported weight
}

// New returns the demo service for a node named node exported with weight.
func New(node string, weight int) *Echo {
	return &Echo{node: node, weight: weight, started: time.Now()}
}

// Echo returns v unchanged.
func (e *Echo) Echo(ctx context.Context, v any) (any, error) { return v, nil }

// Sleep waits ms milliseconds and returns ms; it returns ctx's error early
// when ctx is cancelled (the consumer's deadline passed or it went away).
func (e *Echo) Sleep(ctx context.Context, ms int) (int, error) {
	if ms < 0 {
		return 0, fmt.Errorf("demo: sleep %d ms: want a non-negative duration", ms)
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return ms, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Payload returns n bytes (a repeating pattern), for payload-limit and
// throughput tests. n must be in [0, MaxPayload].
func (e *Echo) Payload(ctx context.Context, n int) ([]byte, error) {
	if n < 0 || n > MaxPayload {
		return nil, fmt.Errorf("demo: payload %d bytes: want 0 to %d", n, MaxPayload)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b, nil
}

// Fail always returns an error whose message is msg.
func (e *Echo) Fail(ctx context.Context, msg string) error { return errors.New(msg) }

// Info describes this provider.
func (e *Echo) Info(ctx context.Context) (Info, error) {
	return Info{Node: e.node, PID: os.Getpid(), Started: e.started, Weight: e.weight}, nil
}
