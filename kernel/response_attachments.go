package kernel

import (
	"errors"
	"maps"
	"sync"

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

// SetResponseAttachment keeps key and value for the call's answer
// (spi.ResponseAttachmentSetter); an error once the answer is made.
func (c *callCtx) SetResponseAttachment(key, value string) error {
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
	p.m[key] = value
	return nil
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
