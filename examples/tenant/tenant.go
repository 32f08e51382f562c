// Package tenant is an example third-party filter served as an airnode
// plugin: a consumer names its tenant, and a provider serves only the
// tenants it lists.
//
// Registered name: whatever plugins.yaml calls it (the binary calls itself
// "tenant"). It is active on both sides when the URL has its key:
//
//	key          type    side      meaning
//	tenant       string  consumer  the tenant sent with each call (attachment "tenant")
//	tenant       string  provider  the tenants served, comma-separated
//	tenant.from  enum    provider  where the caller's tenant comes from: "attachment" (default),
//	                               or "certificate": its TLS client certificate's names
//
// With tenant.from=certificate (a provider under mutual TLS, --tls-ca),
// the caller's tenant is not what it says but who its certificate names:
// the call is served when the certificate's common name or one of its DNS
// names (spi.PeerCertificate, which the host gives a filter plugin as it
// gives an in-process filter) is a listed tenant; the attachment is not
// read. A call without a client certificate is refused.
//
// A provider refuses a call naming no tenant or another one with
// BAD_REQUEST and spi.ErrAccessDenied as the Cause: the host counts it as
// "denied by a filter plugin" in airnode stats, not as a failure of the
// method (a caller without the right tenant says nothing about the
// service's health). Safe for concurrent use.
package tenant

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/airnode/airnode/spi"
)

// Name is the filter's own name; Key its URL key; Attachment the
// attachment that carries the consumer's tenant to the provider; FromKey
// the provider's key saying where the tenant comes from, FromAttachment
// (default) or FromCertificate.
const (
	Name            = "tenant"
	Key             = "tenant"
	Attachment      = "tenant"
	FromKey         = "tenant.from"
	FromAttachment  = "attachment"
	FromCertificate = "certificate"
)

// Builder builds tenant filters. The zero value is ready.
type Builder struct{}

// Name returns "tenant".
func (Builder) Name() string { return Name }

// Activation puts the filter in both sides' chains when the URL has
// tenant=... (a reference without it sends no tenant; an export without
// it refuses nobody).
func (Builder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}, Key: Key}
}

// Keys declares the key (spi.KeyDescriber), for `airnode list --keys` and
// the host's did-you-mean warnings on misspelt keys.
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{{Key: Key, Type: spi.KeyTypeString,
		Doc: "consumer: the tenant sent with each call (attachment tenant); provider: the tenants served, comma-separated; another tenant or none is refused"},
		{Key: FromKey, Type: spi.KeyTypeEnum, Default: FromAttachment, Values: []string{FromAttachment, FromCertificate},
			Doc: "provider: where the caller's tenant comes from: the attachment it sends, or the names of its TLS client certificate (mutual TLS)"}}
}

// ReadsArguments says the filter never reads a call's arguments, so the
// host does not send them to the plugin (sdk.ArgumentsReader).
func (Builder) ReadsArguments() bool { return false }

// ReadsResult says the filter is a gate that never uses what next.Invoke
// returns (it sets an attachment or refuses), so the host keeps one round
// trip per call: a pass before the call (sdk.ResultReader). Without it
// each call that passes costs a second round trip, to run the rest of
// the chain and hand the plugin the result.
func (Builder) ReadsResult() bool { return false }

// Build returns the filter of the side u names (spi.KeySide). An empty
// value is an error: serve exits naming the service and the filter.
func (Builder) Build(u spi.URL) (spi.Filter, error) {
	v := u.ParamOr(Key, "")
	tenants := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
	if len(tenants) == 0 {
		return nil, fmt.Errorf("tenant: empty value for URL key %q: want a tenant (consumer) or a comma list of tenants (provider)", Key)
	}
	from := u.ParamOr(FromKey, FromAttachment)
	if from != FromAttachment && from != FromCertificate {
		return nil, fmt.Errorf("tenant: URL key %s=%q: want %q (the tenant the caller sends) or %q (the names of its TLS client certificate)",
			FromKey, from, FromAttachment, FromCertificate)
	}
	if u.ParamOr(spi.KeySide, "") == string(spi.Consumer) {
		return consumer(v), nil
	}
	if from == FromCertificate {
		return certified(tenants), nil
	}
	return provider(tenants), nil // never holds "": a call without the attachment is refused
}

// consumer sends its tenant with each call.
type consumer string

// Invoke sets the attachment and goes on.
func (c consumer) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	inv.SetAttachment(Attachment, string(c))
	return next.Invoke(ctx, inv)
}

// provider lets through the calls of the tenants it lists.
type provider []string

// Invoke refuses a call of another tenant or none before the service runs.
func (p provider) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	t := inv.Attachment(Attachment)
	if slices.Contains(p, t) {
		return next.Invoke(ctx, inv)
	}
	why := fmt.Sprintf("tenant %q is not served here", t)
	if t == "" {
		why = "no tenant (set tenant=... on the reference)"
	}
	return refuse(inv, why)
}

// certified lets through the calls whose TLS client certificate names one
// of its tenants.
type certified []string

// Invoke refuses a call without a client certificate, or whose
// certificate names no tenant served, before the service runs.
func (p certified) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	cert := spi.PeerCertificate(ctx)
	if cert == nil {
		return refuse(inv, "no client certificate ("+FromKey+"="+FromCertificate+" needs mutual TLS: serve with --tls-ca)")
	}
	names := append([]string{cert.Subject.CommonName}, cert.DNSNames...)
	for _, n := range names {
		if n != "" && slices.ContainsFunc(p, func(t string) bool { return strings.EqualFold(t, n) }) {
			return next.Invoke(ctx, inv)
		}
	}
	return refuse(inv, fmt.Sprintf("certificate %q (names %s) names no tenant served here",
		cert.Subject.String(), strings.Join(slices.DeleteFunc(names, func(n string) bool { return n == "" }), ", ")))
}

// refuse is the BAD_REQUEST of a call refused, why saying why.
func refuse(inv *spi.Invocation, why string) spi.Result {
	return spi.Result{Err: &spi.Error{Status: spi.StatusBadRequest, Cause: spi.ErrAccessDenied,
		Message: fmt.Sprintf("tenant: %s.%s refused: %s", inv.Service, inv.Method, why)}}
}

var (
	_ spi.FilterBuilder = Builder{}
	_ spi.KeyDescriber  = Builder{}
	_ spi.Filter        = consumer("")
	_ spi.Filter        = provider(nil)
	_ spi.Filter        = certified(nil)
)
