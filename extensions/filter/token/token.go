package token

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/internal/ratelog"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name of this filter.
const Name = "token"

// Key is the URL key that activates the filter and holds the token.
const Key = spi.AttachmentToken

// Order is the filter's activation order: inside metrics and accesslog, so
// that they record refused calls, outside the limits.
const Order = -50

// Builder builds token filters. The zero value is ready to use.
type Builder struct{}

// Name returns "token".
func (Builder) Name() string { return Name }

// Activation switches the filter on for both sides when the URL has "token".
func (Builder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}, Key: Key, Order: Order}
}

// IsRandom reports whether a token value asks for a random token ("true"
// or "default", Dubbo's spellings).
func IsRandom(v string) bool { return v == "true" || v == "default" }

// Build reads u's side and token. Errors: no or unknown "side"; an empty
// token; "true"/"default" not replaced by a random token. Pure.
func (Builder) Build(u spi.URL) (spi.Filter, error) {
	v, _ := u.Param(spi.KeySide)
	side := spi.Side(v)
	if side != spi.Consumer && side != spi.Provider {
		return nil, fmt.Errorf("token: URL key %q is %q: want %q or %q", spi.KeySide, v, spi.Consumer, spi.Provider)
	}
	tok, ok := u.Param(Key)
	switch {
	case !ok || tok == "false":
		return &Filter{side: side}, nil
	case tok == "":
		return nil, &spi.KeyError{Keys: []string{Key}, Values: []string{""},
			Msg: fmt.Sprintf("token: URL key %q is empty: want a secret, true for a random one, or false", Key)}
	case IsRandom(tok) && side == spi.Provider:
		return nil, fmt.Errorf("token: %s=%s was not replaced by a random token at export (the kernel publishes one in the provider URL)", Key, tok)
	case IsRandom(tok):
		return nil, fmt.Errorf("token: a consumer's %s of %q asks for a random token, which only a provider makes (at export): give the provider's token, or leave the key out to use the one the registry publishes", Key, tok)
	}
	return &Filter{side: side, token: []byte(tok), on: true, addr: u.Address()}, nil
}

// Filter checks (provider) or sends (consumer) the token.
type Filter struct {
	side     spi.Side
	token    []byte
	on       bool
	addr     string       // the provider's address, for its refusal lines
	log      *slog.Logger // the node's (UseLogger); nil: slog.Default()
	rejected atomic.Int64
}

// UseLogger makes the filter log its refusals to l, its node's logger
// (spi.LoggerUser: the kernel calls it right after Build).
func (f *Filter) UseLogger(l *slog.Logger) { f.log = l }

// refusals bounds the refusal lines per base logger (internal/ratelog):
// per class (peer IP, missing or wrong, service and method) the first
// refusal of a burst, then one each time its count doubles up to 1,024,
// then one every 10 s, with a summary 10 s after the last.
var refusals = ratelog.Limiters{SummaryAttrs: []any{"component", Name}}

// refusedMsg is the message of a refusal's Warn line.
const refusedMsg = "refusing calls without the provider's token"

// logRefusal writes, rate-bounded at Warn, that a call of service.method
// from peer (its address, or "unknown address") was refused, what being
// "missing" or "wrong". Neither token is written. Attributes: provider,
// peer, reason (missing, wrong), service, method, rejected (this filter's
// refusals so far), then suppressed and in_burst after a burst's first
// line.
func (f *Filter) logRefusal(peer, what, service, method string, rejected int64) {
	lg := f.log
	if lg == nil {
		lg = slog.Default()
	}
	if !lg.Enabled(context.Background(), slog.LevelWarn) {
		return
	}
	host := peer
	if h, _, err := net.SplitHostPort(peer); err == nil {
		host = h // one class per peer IP, whatever its ports
	}
	ok, suppressed, n := refusals.For(lg).Event(host+" "+what+" "+service+" "+method, time.Now(), slog.LevelWarn, refusedMsg)
	if !ok {
		return
	}
	// component leads the attributes rather than a lg.With: the limiter
	// is per node logger (refusals.For(lg))
	lg.Warn(refusedMsg, ratelog.Attrs([]any{"component", Name, "provider", f.addr, "consumer", peer, "reason", what,
		"service", service, "method", method, "rejected", rejected}, suppressed, n)...)
}

// Rejected returns how many calls this filter refused.
func (f *Filter) Rejected() int64 { return f.rejected.Load() }

// Invoke checks the call's token on the provider, or attaches the
// reference's token on the consumer, and continues.
func (f *Filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	if !f.on {
		return next.Invoke(ctx, inv)
	}
	if f.side == spi.Consumer {
		if inv.Attachment(spi.AttachmentToken) == "" {
			inv.SetAttachment(spi.AttachmentToken, string(f.token))
		}
		return next.Invoke(ctx, inv)
	}
	got, present := inv.Attachments[spi.AttachmentToken]
	if present && subtle.ConstantTimeCompare([]byte(got), f.token) == 1 {
		delete(inv.Attachments, spi.AttachmentToken)
		return next.Invoke(ctx, inv)
	}
	rejected := f.rejected.Add(1)
	counters.Access.TokenRejections.Inc()
	what, why := "wrong", "it is not the provider's token"
	if !present || got == "" {
		what, why = "missing", "the provider requires one (URL key token)"
	}
	from := inv.Attachment(spi.AttachmentRemote)
	if from == "" {
		from = "unknown address"
	}
	f.logRefusal(from, what, inv.Service, inv.Method, rejected)
	return spi.Result{Err: &spi.Error{Status: RefusedStatus, Cause: spi.ErrAccessDenied,
		Message: fmt.Sprintf("token: %s token for %s.%s from %s: refused, %s; the method did not run", what, inv.Service, inv.Method, from, why)}}
}

// RefusedStatus is the status of a call the provider's token filter
// refuses: BAD_REQUEST, the status of a request refused for what the
// caller sent, before the method ran. The wire protocol's status codes are
// Dubbo's, which have none for authorization. BAD_REQUEST is the nearest:
// the failover cluster does not retry it on another provider (a token the
// caller got wrong is a configuration matter, which a retry would only
// repeat and hide), outlier detection does not count it against the
// provider (which answered), and a consumer's code tells a refused token
// apart from the method's own error (SERVICE_ERROR) by status, without
// reading the message. The message never contains a token.
const RefusedStatus = spi.StatusBadRequest

var (
	_ spi.FilterBuilder = Builder{}
	_ spi.Filter        = (*Filter)(nil)
	_ spi.LoggerUser    = (*Filter)(nil)
)
