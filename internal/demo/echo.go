package demo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"time"

	"github.com/airnode/airnode/spi"
)

// Interface is the service interface name demo.Echo is exported under.
const Interface = "demo.Echo"

// MaxPayload bounds Payload's n: 64 MiB, whatever the provider's payload
// limit, so that a typo (Payload 1073741824) cannot make the provider
// allocate gigabytes (the runtime keeps that memory long after).
const MaxPayload = 64 << 20

// Echo is the demo service. Create it with New.
type Echo struct {
	node    string
	weight  int
	started time.Time
	limit   int  // Payload's largest n
	framed  bool // limit is the provider's payload limit less ResponseFraming
}

// Info describes the provider process that answered.
type Info struct {
	Node    string    `json:"node" msgpack:"node"`       // the node's name (host name by default)
	PID     int       `json:"pid" msgpack:"pid"`         // provider process id
	Started time.Time `json:"started" msgpack:"started"` // when New was called
	Weight  int       `json:"weight" msgpack:"weight"`   // the provider's exported weight
	// Attachments are the call's attachments as the provider's method
	// sees them (spi.IncomingAttachments: what the consumer sent, less
	// what provider filters removed, plus "remote", the consumer's
	// address); absent when none.
	Attachments map[string]string `json:"attachments,omitempty" msgpack:"attachments,omitempty"`
}

// New returns the demo service for a node named node exported with weight.
func New(node string, weight int) *Echo {
	return &Echo{node: node, weight: weight, started: time.Now(), limit: MaxPayload}
}

// LimitPayload lowers Payload's bound to what fits a response body of n
// bytes, the provider's payload limit (URL key "payload"): n less
// ResponseFraming, since a larger answer could not be sent anyway. n ≤
// ResponseFraming or above MaxPayload leaves MaxPayload. Call it before
// exporting; it returns e.
func (e *Echo) LimitPayload(n int64) *Echo {
	if n > ResponseFraming && n < MaxPayload {
		e.limit = int(n - ResponseFraming)
		e.framed = true
	}
	return e
}

// ResponseFraming is what a response body holds besides Payload's bytes
// with the msgpack codec: the response preamble and msgpack's bin32 header
// (6 bytes), rounded up. The json codec writes bytes as base64, a third
// more, so its Payload fits less.
const ResponseFraming = 16

// Echo returns v unchanged.
func (e *Echo) Echo(ctx context.Context, v any) (any, error) { return v, nil }

// MaxSleep bounds Sleep's ms: 1 minute. A consumer's deadline of 0 (none)
// let any caller park calls on the provider for as long as it liked;
// a test that needs a longer call writes its own
// service.
const MaxSleep = time.Minute

// Sleep waits ms milliseconds and returns ms; it returns ctx's error early
// when ctx is cancelled (the consumer's deadline passed or it went away).
// ms must be in [0, 60000] (MaxSleep); otherwise it fails with BAD_REQUEST
// without waiting.
func (e *Echo) Sleep(ctx context.Context, ms int) (int, error) {
	if ms < 0 || ms > int(MaxSleep/time.Millisecond) {
		return 0, spi.Errorf(spi.StatusBadRequest, "demo: sleep %d ms: want 0 to %d ms (1 minute, demo.MaxSleep)", ms, MaxSleep/time.Millisecond)
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
// throughput tests. n must be in [0, limit] (MaxPayload, or the provider's
// payload limit, see LimitPayload); otherwise it fails with BAD_REQUEST
// before allocating anything.
func (e *Echo) Payload(ctx context.Context, n int) ([]byte, error) {
	if n < 0 || n > e.limit {
		if e.framed {
			return nil, spi.Errorf(spi.StatusBadRequest, "demo: payload %d bytes: want 0 to %d bytes (the provider's payload limit, %s, less %d bytes of response framing)", n, e.limit, size(int(e.limit+ResponseFraming)), ResponseFraming)
		}
		return nil, spi.Errorf(spi.StatusBadRequest, "demo: payload %d bytes: want 0 to %s (%d bytes)", n, size(e.limit), e.limit)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b, nil
}

// size writes n bytes in MiB or KiB when it is a whole number of them.
func size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Fail always returns an error whose message is msg.
func (e *Echo) Fail(ctx context.Context, msg string) error { return errors.New(msg) }

// Info describes this provider.
func (e *Echo) Info(ctx context.Context) (Info, error) {
	var att map[string]string
	if in := spi.IncomingAttachments(ctx); len(in) > 0 {
		att = maps.Clone(in) // the call's map is reused after the call
	}
	return Info{Node: e.node, PID: os.Getpid(), Started: e.started, Weight: e.weight, Attachments: att}, nil
}
