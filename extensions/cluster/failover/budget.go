package failover

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/airnode/airnode/spi"
)

// URL keys of the retry budget, read from the reference URL at Build,
// service level only.
const (
	// KeyRetryTokens is the retry budget's size in tokens, an integer from
	// 0 to MaxRetryTokens; 0 (the default) turns the budget off.
	KeyRetryTokens = "retry.tokens"
	// KeyRetryRatio is the tokens a successful call gives back, a decimal
	// from 0.001 to 1 counted to 3 places; default 0.1.
	KeyRetryRatio = "retry.ratio"

	// DefaultRetryTokens leaves the budget off, as gRPC does without a
	// retryThrottling policy and as Dubbo, which has none, always is.
	DefaultRetryTokens = 0
	// DefaultRetryRatio is gRPC's usual tokenRatio.
	DefaultRetryRatio = 0.1
	// MaxRetryTokens bounds retry.tokens, as gRPC bounds maxTokens.
	MaxRetryTokens = 1000
)

// milli is the budget's fixed point: a token is 1000 milli-tokens, so a
// ratio of 0.001 is one (gRPC keeps tokenRatio to 3 decimals likewise).
const milli = 1000

// budget is a reference's retry budget: gRPC's retry throttling (gRPC
// proposal A6, "gRPC Retry Design", retryThrottling). It holds a token
// count in milli-tokens, starting full at max; every failed attempt that
// failover counts (budget.fail) takes one token, down to 0; every
// successful call gives ratio back, up to max; a retry is made only while
// the count is above max/2. A first attempt never asks it. A nil *budget
// is off: it allows every retry and counts nothing.
//
// Safe for concurrent use, lock-free. A success when the count is full,
// the steady state, costs one atomic load and never writes.
type budget struct {
	tokens atomic.Int64 // milli-tokens, 0..max
	max    int64        // milli-tokens
	ratio  int64        // milli-tokens a success gives back, 1..milli
	size   int64        // retry.tokens as given, for messages
}

// newBudget returns a full budget of size tokens (1..MaxRetryTokens)
// giving back ratio (0.001..1) tokens per success.
func newBudget(size int64, ratio float64) *budget {
	b := &budget{max: size * milli, ratio: int64(math.Round(ratio * milli)), size: size}
	b.tokens.Store(b.max)
	return b
}

// succeeded gives back ratio tokens for a successful call, capped at max.
// Full (the steady state), it costs one atomic load and writes nothing.
func (b *budget) succeeded() {
	if b != nil && b.tokens.Load() < b.max {
		b.refill()
	}
}

// refill is succeeded's slow path: add ratio, capped at max.
func (b *budget) refill() {
	for {
		t := b.tokens.Load()
		if t >= b.max {
			return
		}
		if b.tokens.CompareAndSwap(t, min(t+b.ratio, b.max)) {
			return
		}
	}
}

// failed takes one token for a failed attempt, down to 0.
func (b *budget) failed() {
	if b == nil {
		return
	}
	for {
		t := b.tokens.Load()
		if t <= 0 {
			return
		}
		if b.tokens.CompareAndSwap(t, max(t-milli, 0)) {
			return
		}
	}
}

// allows reports whether a retry may be made: the count is above max/2.
func (b *budget) allows() bool {
	return b == nil || 2*b.tokens.Load() > b.max
}

// pausedNote is the clause a call whose retry the budget refused ends its
// first line with, saying how many of its retries it did not make:
// "; retries paused: failover made 1 of its retries=2, skipped 1: the
// reference's retry budget (retry.tokens=10) is spent by failures, and
// successes refill it".
func (b *budget) pausedNote(skipped, retries int) string {
	made := "none"
	if skipped < retries {
		made = strconv.Itoa(retries - skipped)
	}
	return fmt.Sprintf("; retries paused: failover made %s of its %s=%d, skipped %d: the reference's retry budget (%s=%d) is spent by failures, and successes refill it",
		made, KeyRetries, retries, skipped, KeyRetryTokens, b.size)
}

// parseBudget reads retry.tokens and retry.ratio from reference URL u: nil
// when retry.tokens is 0 or absent. A malformed or out-of-bounds value of
// either is a *spi.ParamError naming the key, the value and what is
// allowed (RetryTokensWant, RetryRatioWant). A method-level form
// ("Sleep.retry.tokens", "methods.Sleep.retry.ratio") has no effect (Refer
// warns), but a malformed one is refused as the service-level value is,
// naming the key as written: a value that could never be read is a
// mistake however it is placed (fix-au).
func parseBudget(u spi.URL) (*budget, error) {
	size, ratio, err := budgetKeys(u, "")
	if err != nil {
		return nil, err
	}
	for _, m := range u.MethodsSetting(KeyRetryTokens, KeyRetryRatio) {
		if _, _, err := budgetKeys(u, m); err != nil {
			return nil, err
		}
	}
	if size == 0 {
		return nil, nil
	}
	return newBudget(size, ratio), nil
}

// RetryRatioWant is what every retry.ratio error says is allowed.
const RetryRatioWant = "a decimal number from 0.001 to 1 (tokens a successful call gives back)"

// budgetKeys reads retry.tokens and retry.ratio for method ("": service
// level) with spi.URL.MethodParam's precedence.
func budgetKeys(u spi.URL, method string) (size int64, ratio float64, err error) {
	size, err = u.MethodIntIn(method, KeyRetryTokens, DefaultRetryTokens, 0, MaxRetryTokens, "no retry budget")
	if err != nil {
		return 0, 0, err
	}
	ratio = DefaultRetryRatio
	if v, src, ok := u.MethodParam(method, KeyRetryRatio); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(f > 0 && f <= 1) || math.Round(f*milli) < 1 {
			return 0, 0, &spi.ParamError{Key: src, Value: v, Want: RetryRatioWant}
		}
		ratio = f
	}
	return size, ratio, nil
}
