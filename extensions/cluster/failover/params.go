package failover

import "github.com/airnode/airnode/spi"

// URL keys and defaults.
const (
	// KeyRetries is the number of extra attempts after the first.
	KeyRetries = "retries"
	// KeyIdempotent marks a method safe to run twice, so that it is also
	// retried after SERVER_TIMEOUT, SERVER_ERROR and CHANNEL_INACTIVE
	// after the request was sent.
	KeyIdempotent = "idempotent"

	DefaultRetries = 2
	// MaxRetries bounds retries.
	MaxRetries = 100
)

// policy is the retry policy of one method (or the service).
type policy struct {
	retries    int
	idempotent bool
	// own says which keys the reference URL sets for the method (at
	// service or method level): ownRetries, ownIdempotent. A key it does
	// not set is the provider's (providerPolicies) when the provider sets
	// it.
	own uint8
}

// Bits of policy.own.
const (
	ownRetries uint8 = 1 << iota
	ownIdempotent
	ownAll = ownRetries | ownIdempotent
)

// parsePolicy resolves the policy of method ("" for the service level)
// from reference URL u; a malformed value is a *spi.ParamError.
func parsePolicy(u spi.URL, method string) (policy, error) {
	n, err := u.MethodIntIn(method, KeyRetries, DefaultRetries, 0, MaxRetries, "")
	if err != nil {
		return policy{}, err
	}
	idem, err := u.MethodBool(method, KeyIdempotent, false)
	if err != nil {
		return policy{}, err
	}
	p := policy{retries: int(n), idempotent: idem}
	if _, _, ok := u.MethodParam(method, KeyRetries); ok {
		p.own |= ownRetries
	}
	if _, _, ok := u.MethodParam(method, KeyIdempotent); ok {
		p.own |= ownIdempotent
	}
	return p, nil
}

// providerPolicies is the retry policy a provider invoker's URL sets, the
// service's and each method's that sets a key of its own. The invoker's
// URL is the provider's merged with the reference's (spi.MergeURL), so a
// key the reference does not set for a method is the provider's there.
type providerPolicies struct {
	def     policy
	methods map[string]policy // nil when no method sets a key
}

// parseProvider reads the policies of provider invoker URL u. A value
// that is malformed or out of bounds is taken as absent (the default):
// the provider's Export refuses such a value of the cluster it names, and
// the consumer cannot fix the provider's URL.
func parseProvider(u spi.URL) providerPolicies {
	pp := providerPolicies{def: lenientPolicy(u, "")}
	for _, m := range u.MethodsSetting(KeyRetries, KeyIdempotent) {
		if pp.methods == nil {
			pp.methods = make(map[string]policy)
		}
		pp.methods[m] = lenientPolicy(u, m)
	}
	return pp
}

// lenientPolicy is parsePolicy taking a bad value as absent.
func lenientPolicy(u spi.URL, method string) policy {
	n, err := u.MethodInt(method, KeyRetries, DefaultRetries)
	if err != nil || n < 0 || n > MaxRetries {
		n = DefaultRetries
	}
	idem, err := u.MethodBool(method, KeyIdempotent, false)
	if err != nil {
		idem = false
	}
	return policy{retries: int(n), idempotent: idem}
}

// of returns the provider's policy of method.
func (pp *providerPolicies) of(method string) policy {
	if p, ok := pp.methods[method]; ok {
		return p
	}
	return pp.def
}

// under returns p, the reference's policy, with each key the reference
// does not set taken from the provider's policy pp.
func (p policy) under(pp policy) policy {
	if p.own&ownRetries == 0 {
		p.retries = pp.retries
	}
	if p.own&ownIdempotent == 0 {
		p.idempotent = pp.idempotent
	}
	return p
}
