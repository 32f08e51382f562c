package cli

import (
	"context"
	"errors"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// swallowedBuilder is a consumer filter above the cluster, registered only
// in `airnode bench`'s catalogs (switched on by swallowedKey, which bench
// sets when mayBeSwallowed), that notes a failure the cluster swallowed
// (spi.Result.Swallowed: cluster=failsafe returns the zero result with no
// error) in the call's callSwallowed, so that bench counts the call under
// "<STATUS> (swallowed)" (swallowedStatus) rather than as a BAD_RESPONSE
// of its echo check: the provider never sent one.
type swallowedBuilder struct{}

func (swallowedBuilder) Name() string { return "bench.swallowed" }

func (swallowedBuilder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer}, Key: swallowedKey}
}

// swallowedKey switches swallowedFilter on (only in the bench's own
// catalogs).
const swallowedKey = "bench.swallowed"

// mayBeSwallowed reports whether a cluster that reference URL u chooses,
// for the service or any method, may swallow a failure: any but the
// bundled failover, failfast and forking, which never set
// spi.Result.Swallowed (failsafe does; another extension may). Without
// one, bench leaves swallowedFilter out of the chain: at c=10,000 each
// filter layer, however idle, cost the consumer about 0.4 µs a call in
// stack memory that left the cache while the caller waited
// (bench/README.md, the twenty-ninth pass).
func mayBeSwallowed(cat *extension.Catalogs, u spi.URL) bool {
	for _, m := range append([]string{""}, u.MethodsSetting(cat.Cluster.Key())...) {
		switch cat.Cluster.Choose(u, m).Name {
		case "failover", "failfast", "forking":
		default:
			return true
		}
	}
	return false
}

func (swallowedBuilder) Build(spi.URL) (spi.Filter, error) { return swallowedFilter{}, nil }

type swallowedFilter struct{}

func (swallowedFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	res := next.Invoke(ctx, inv)
	if res.Err == nil && res.Swallowed != nil {
		if c, ok := ctx.Value(callSwallowedKey{}).(*callSwallowed); ok {
			c.err = res.Swallowed
		}
	}
	return res
}

// callSwallowed holds the failure the cluster swallowed in a caller's
// current call (nil: none); one per caller, reset before each call.
type callSwallowed struct{ err error }

type callSwallowedKey struct{}

// swallowedError is the failure of a call whose cluster swallowed err
// (failsafe): the call itself returned the zero result and no error.
type swallowedError struct{ err error }

func (e *swallowedError) Error() string {
	return "the cluster swallowed the failure and returned the zero result (cluster=failsafe): " + e.err.Error()
}

func (e *swallowedError) Unwrap() error { return e.err }

// swallowedSuffix ends the status name of a swallowed failure
// (benchStatus): "SERVER_ERROR (swallowed)".
const swallowedSuffix = " (swallowed)"

// swallowedStatus names err's status when it is a swallowedError: the
// status the provider (or the consumer's own attempt) failed with, and
// swallowedSuffix.
func swallowedStatus(err error) (string, bool) {
	var sw *swallowedError
	if !errors.As(err, &sw) {
		return "", false
	}
	return spi.StatusOf(sw.err).String() + swallowedSuffix, true
}

var (
	_ spi.FilterBuilder = swallowedBuilder{}
	_ spi.Filter        = swallowedFilter{}
)
