package kernel

import (
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// respAttachments holds what a provider method gave
// spi.SetResponseAttachments, until its answer takes them.
type respAttachments struct {
	mu   sync.Mutex
	m    map[string]string
	sent bool // the answer took m: later sets fail
}

// respSent marks a callCtx whose answer has been made with no response
// attachments set: a set from then on fails.
var respSent = new(respAttachments)

// errResponseSent is a late spi.SetResponseAttachments' error.
var errResponseSent = errors.New("spi: SetResponseAttachments after the method returned: its answer has been sent (set them before returning)")

// SetResponseAttachments keeps kv's keys and values for the call's answer
// (spi.ResponseAttachmentSetter), all or none: an error once the answer is
// made, or when the keys set would number over protocol.MaxAttachments,
// the count a consumer decodes (a provider filter's attachments, added
// later, can still take the answer over it: the exchange then answers
// BAD_RESPONSE).
func (c *callCtx) SetResponseAttachments(kv []string) error {
	p := c.resp.Load()
	for p == nil {
		if c.resp.CompareAndSwap(nil, &respAttachments{m: map[string]string{}}) {
			p = c.resp.Load()
			break
		}
		p = c.resp.Load()
	}
	if p == respSent {
		return errResponseSent
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sent {
		return errResponseSent
	}
	if len(p.m)+len(kv)/2 > protocol.MaxAttachments {
		if n := countWith(p.m, kv); n > protocol.MaxAttachments {
			return fmt.Errorf("spi: SetResponseAttachments: the answer would carry %d attachments, over the %d a consumer accepts (a fixed limit of the wire format, docs/wire.md); none of the keys given was set", n, protocol.MaxAttachments)
		}
	}
	for i := 0; i < len(kv); i += 2 {
		p.m[kv[i]] = kv[i+1]
	}
	return nil
}

// countWith returns how many keys m would hold with kv's keys added (a key
// in both, or twice in kv, counts once).
func countWith(m map[string]string, kv []string) int {
	added := make(map[string]struct{}, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		if _, ok := m[kv[i]]; !ok {
			added[kv[i]] = struct{}{}
		}
	}
	return len(m) + len(added)
}

// responseAttachments returns the attachments of the call's answer: the
// method's (spi.SetResponseAttachments) merged with filters, a
// filter's value winning on the same key (filters set theirs after the
// method returned); filters itself when the method set none. Later sets
// fail. filters is not modified (a filter may share its map).
func (c *callCtx) responseAttachments(filters map[string]string) map[string]string {
	p := c.resp.Swap(respSent)
	if p == nil || p == respSent {
		return filters
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = true
	if len(p.m) == 0 {
		return filters
	}
	out := make(map[string]string, len(p.m)+len(filters))
	maps.Copy(out, p.m)
	maps.Copy(out, filters)
	return out
}

var _ spi.ResponseAttachmentSetter = (*callCtx)(nil)
