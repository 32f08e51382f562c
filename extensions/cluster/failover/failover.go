package failover

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"
	"time"

	"github.com/airnode/airnode/extensions/cluster/internal/clusterkit"
	"github.com/airnode/airnode/internal/counters"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, the value of the URL key "cluster".
const Name = "failover"

// Builder builds failover clusters. The zero value is ready to use.
type Builder struct{}

// Name returns "failover".
func (Builder) Name() string { return Name }

// Build validates retries and idempotent, service-level and for every
// method that sets them, and the retry budget's retry.tokens and
// retry.ratio (service level); a malformed or out-of-bounds value is a
// *spi.ParamError naming the key, the value and what is allowed.
func (Builder) Build(u spi.URL) (spi.Cluster, error) {
	def, err := parsePolicy(u, "")
	if err != nil {
		return nil, err
	}
	b, err := parseBudget(u)
	if err != nil {
		return nil, err
	}
	c := &Cluster{def: def, budget: b, service: u.ServiceKey()}
	for _, m := range u.MethodsSetting(KeyRetries, KeyIdempotent) {
		p, err := parsePolicy(u, m)
		if err != nil {
			return nil, err
		}
		if c.methods == nil {
			c.methods = make(map[string]policy)
		}
		c.methods[m] = p
	}
	return c, nil
}

// Cluster is a failover cluster.
type Cluster struct {
	def     policy
	methods map[string]policy // read-only after Build

	// budget is the reference's retry budget (retry.tokens), shared by
	// its methods; nil: off.
	budget *budget

	// service is the reference's service key, the label of its retry
	// counters (counters.Retry).
	service string

	// providers caches each provider invoker's own retries and idempotent,
	// read for the keys the reference leaves unset once a first attempt
	// has failed (a call that succeeds at once never reads them).
	providers clusterkit.PerInvoker[providerPolicies]
}

// withProvider returns p, method's policy from the reference URL, with
// the keys the reference does not set taken from x's URL (the provider's
// retries, idempotent, at method or service level: Dubbo's provider
// defaults), x being the provider of the call's first attempt.
func (c *Cluster) withProvider(p policy, method string, x spi.Invoker) policy {
	if p.own == ownAll {
		return p
	}
	pp := c.providers.Get(x, parseProvider)
	return p.under(pp.of(method))
}

func (c *Cluster) policy(method string) policy {
	if p, ok := c.methods[method]; ok {
		return p
	}
	return c.def
}

// Invoke calls one provider chosen by lb and, while the failure is
// retryable and attempts remain, another one: a provider not tried yet,
// else any tried one except those whose failure would repeat at once
// (Repeats: a refused dial, a certificate that failed verification, a
// go-away) and
// those that answered SERVICE_NOT_FOUND, as Dubbo's FailoverClusterInvoker
// reselects among the invokers not tried first. When the last failure is
// SERVER_THREADPOOL_EXHAUSTED and no provider is left untried, it waits
// Backoff before asking a tried one again (the pool may have drained);
// a wait that would outlast ctx's deadline is not begun, and ctx ending
// cuts one short: either ends the retries, as does ctx's deadline having
// passed. A call whose retries a backoff longer than what is left of
// ctx's deadline ended keeps the full pool's status and says so on its
// first line ("...; the caller's deadline stopped the retries: the 55ms
// it left was less than the 80ms backoff due after a full pool before
// attempt 4 of 6 (retries=5)"), also after one attempt. A retry that fails CLIENT_TIMEOUT once ctx's deadline has passed
// (refused before sending, or withdrawn unsent) counts as no attempt: the
// failure of the last attempt made stands. It returns the first success,
// or the last failure, except that a failure which certainly did not run
// (clusterkit.DidNotRun: CLIENT_TIMEOUT, CHANNEL_INACTIVE before sending,
// SERVER_THREADPOOL_EXHAUSTED, SERVICE_NOT_FOUND, a refused dial) never
// ends a call one of whose attempts may have run: the failure of the last
// attempt that may have run stands, and the message counts the attempts
// after it ("...: SERVER_TIMEOUT: ...; then 1 attempt that did not run:
// CLIENT_TIMEOUT: ... (withdrawn, never sent)"), so that no "not sent"
// status invites a resend of a request that may have run. After more
// than one attempt, or when retries were
// left unused because every provider's failure would repeat at once, the
// failure is an *spi.Error with the last status that lists the providers
// tried, each once, with its count when it took several:
// "failover: demo.Echo.Echo failed after 1 attempt on [127.0.0.1:24998]: ...",
// "failover: demo.Echo.Echo failed after 3 attempts on [10.0.0.1:20880 (2 times), 10.0.0.2:20880]: ...".
//
// With a retry budget (retry.tokens > 0) every attempt that fails with a
// failure Retryable would retry for an idempotent method (a failure of
// the provider or the path, not the method's own error nor the caller's
// cancel) takes a token, every success gives retry.ratio back, and a
// retry is made only while more than half the tokens are left; a call
// whose retry the budget refused after SERVER_THREADPOOL_EXHAUSTED first
// waits a backoff (Backoff, bounded by ctx as above), whether or not an
// untried provider was left, then fails with its last attempt's status
// and says so, with the retries it did not make, on its first line:
// "failover: demo.Echo.Sleep failed after 1 attempt on [127.0.0.1:24998]:
// SERVER_THREADPOOL_EXHAUSTED: ...; retries paused: failover made none of
// its retries=2, skipped 2: the reference's retry budget (retry.tokens=10)
// is spent by failures, and successes refill it". Each retry made and
// each refused counts in counters.Retry under the reference's service
// key (airnode_consumer_retries_total).
func (c *Cluster) Invoke(ctx context.Context, inv *spi.Invocation, dir spi.Directory, lb spi.LoadBalance) spi.Result {
	// The first attempt runs in this small frame; the retry loop, whose
	// frame holds three Results and the lists of tried providers (over 1
	// KiB), runs only after it failed. A caller waits for its answer at
	// the bottom of its stack, so every byte above counts: with the loop's
	// frame on it a call's deepest point passed 7 KiB, and each caller's
	// goroutine grew, by a copy, from 8 to 16 KiB of stack
	// (bench/README.md, the thirty-third pass).
	list := dir.List(inv)
	if len(list) == 0 {
		return spi.Result{Err: clusterkit.NoProvider(inv, dir, "")}
	}
	x, err := clusterkit.Select(ctx, lb, dir, list, inv)
	if err != nil { // the balancer could not pick in time: nothing was sent
		return spi.Result{Err: err}
	}
	if x == nil {
		return spi.Result{Err: clusterkit.NoneSelected(inv, dir, lb, list)}
	}
	first := x.Invoke(ctx, inv)
	if first.Err == nil {
		c.budget.succeeded()
		return first
	}
	return c.retry(ctx, inv, dir, lb, list, x, first)
}

// retry goes on after a first attempt that failed: x, picked from list,
// returned first. It makes the retries Invoke describes and returns the
// call's Result.
func (c *Cluster) retry(ctx context.Context, inv *spi.Invocation, dir spi.Directory, lb spi.LoadBalance, list []spi.Invoker, x spi.Invoker, first spi.Result) spi.Result {
	p := c.policy(inv.Method)
	var (
		tried   []spi.Invoker
		errs    []error       // the failure of each attempt in tried
		stuck   []spi.Invoker // tried, failed with an error that repeats at once
		gone    []spi.Invoker // answered SERVICE_NOT_FOUND: never asked again
		last    = first
		made    spi.Result   // the failure of the last attempt made
		ran     spi.Result   // the failure of the last attempt that may have run
		unrun   int          // attempts since ran that certainly did not run (clusterkit.DidNotRun)
		skipped bool         // retries left unused: every provider's error repeats
		paused  int          // retries not made because the retry budget refused the first of them
		busy    bool         // the last attempt found a full pool and no untried provider was left
		waits   int          // backoffs so far
		cut     *deadlineCut // the retries ended as the next backoff would outlast ctx's deadline

		unretried bool // ended on a failure that may have run, with retries and other providers left, as the method is not idempotent

		cand  = list // the providers the attempt's pick was made from
		reask bool   // every provider in the pool had been tried: cand is those that may answer otherwise
	)
	for attempt := 0; ; attempt++ {
		if attempt > 0 { // the first attempt was made by Invoke
			if attempt > p.retries {
				break
			}
			if deadlinePassed(ctx) {
				break // the caller's deadline (or cancel) ends the retries: the last attempt made stands
			}
			if !c.budget.allows() {
				// Failures spent the reference's retry budget: no retry until
				// successes refill it. After a full pool the call still waits
				// a backoff, so that a refused retry costs its caller about
				// the time a retry would and sends nothing: a closed-loop
				// caller does not spin on full pools (tester81 #3). It waits
				// also when the refused retry would have gone to an untried
				// provider at once: a retry that may not be made is not worth
				// its saved time, and without the wait closed-loop callers of
				// several full providers spin (fix-au).
				paused = p.retries - attempt + 1
				counters.Retry.For(c.service).BudgetRefused.Inc()
				if spi.StatusOf(last.Err) == spi.StatusServerThreadpoolExhausted {
					sleep(ctx, Backoff(waits+1))
				}
				break
			}
			if busy {
				waits++
				d := Backoff(waits)
				if dl, ok := ctx.Deadline(); ok {
					if left := time.Until(dl); left > 0 && left <= d {
						// The call ends with a full pool's refusal before its
						// deadline: say that the deadline, not the retries,
						// ran out (tester91 #1).
						cut = &deadlineCut{left: left, backoff: d}
						break
					}
				}
				if !sleep(ctx, d) {
					break // the wait would outlast the call's deadline, or ctx ended
				}
			}
			list = dir.List(inv)
			if len(list) == 0 {
				break
			}
			pool := list
			if len(stuck) > 0 {
				if pool = clusterkit.Exclude(list, stuck); len(pool) == 0 {
					skipped = true
					break // a retry on any of them would fail the same way at once
				}
			}
			cand = clusterkit.Exclude(pool, tried)
			reask = len(cand) == 0
			if reask {
				if spi.StatusOf(last.Err) == spi.StatusServiceNotFound {
					break // every provider answered "not here": asking again won't change it
				}
				// every provider tried: any whose error may change may take the retry
				if cand = clusterkit.Exclude(pool, gone); len(cand) == 0 {
					break
				}
			}
			var err error
			x, err = clusterkit.Select(ctx, lb, dir, cand, inv)
			if err == nil && x == nil && len(cand) < len(pool) {
				x, err = clusterkit.Select(ctx, lb, dir, pool, inv)
			}
			if err != nil { // the balancer could not pick in time: nothing was sent
				last = spi.Result{Err: err}
				break
			}
			if x == nil {
				break
			}
			last = x.Invoke(ctx, inv)
			if spi.StatusOf(last.Err) == spi.StatusClientTimeout && deadlinePassed(ctx) {
				last = made
				break // never sent, for the caller's deadline passed: no attempt; the last one made stands
			}
			counters.Retry.For(c.service).Made.Inc()
			if last.Err == nil {
				c.budget.succeeded()
				return last
			}
		}
		if attempt == 0 {
			// The keys the reference leaves unset are the provider's
			// of the first attempt; read only now, so a call that
			// succeeds at once never pays for them.
			p = c.withProvider(p, inv.Method, x)
		}
		made = last
		tried, errs = append(tried, x), append(errs, last.Err)
		if Retryable(last.Err, true) {
			c.budget.failed() // a failure of the provider or the path, not the method's own
		}
		if !clusterkit.DidNotRun(last.Err) {
			ran, unrun = last, 0
		} else if ran.Err != nil {
			unrun++
		}
		if !Retryable(last.Err, p.idempotent) {
			// Say why no retry was made when one would have been with
			// idempotent=true (tester70 #1: retries=2 and a timeout gave
			// one attempt and no word) — not when the caller's deadline
			// has passed or no other provider is listed (tester71 #10:
			// no retry could have helped then).
			unretried = attempt < p.retries && !p.idempotent && Retryable(last.Err, true) &&
				!deadlinePassed(ctx) && len(list) > 1
			break
		}
		if Repeats(last.Err) {
			stuck = append(stuck, x)
		}
		switch spi.StatusOf(last.Err) {
		case spi.StatusServiceNotFound:
			gone = append(gone, x)
		case spi.StatusServerThreadpoolExhausted:
			// A full pool drains: once no provider is left untried, wait
			// before asking one again.
			busy = reask || len(cand) == 1
			continue
		}
		busy = false
	}
	if ran.Err != nil {
		// What came after the last attempt that may have run did not run
		// (or was no attempt): its "not sent" status would invite a resend
		// of a request that may have run. The one that may have run stands.
		last = ran
	}
	note := "" // on the first line, not after the last attempt's
	switch {
	case unretried:
		note = notRetriedNote(inv, p.retries)
	case paused > 0:
		note = c.budget.pausedNote(paused, p.retries)
	case cut != nil:
		note = cut.note(len(tried), p.retries)
	}
	if len(tried) > 1 || skipped || paused > 0 || cut != nil {
		last.Err = exhausted(inv, tried, errs, last.Err, unrun, note)
		return last
	}
	if unretried {
		last.Err = notRetried(inv, last.Err, p.retries)
	}
	return last
}

// notRetried is err, the failure of an attempt that may have run, saying
// why failover made none of the retries it had left while other providers
// were listed: the request reached the provider, and a method not marked
// idempotent is not sent twice (Dubbo's failover would have retried it).
// Status and cause stay.
func notRetried(inv *spi.Invocation, err error, retries int) error {
	return &spi.Error{Status: spi.StatusOf(err), Message: err.Error() + notRetriedNote(inv, retries), Cause: err}
}

// notRetriedNote is notRetried's text, " (failover made none of its
// retries=2: ...)", which exhausted puts on its first line.
func notRetriedNote(inv *spi.Invocation, retries int) string {
	return fmt.Sprintf(" (failover made none of its retries=%d: the request reached the provider, which may have run it, and %s.%s is not marked idempotent; %s=true or methods.%s.%s=true lets failover retry it on another provider)",
		retries, inv.Service, inv.Method, KeyIdempotent, inv.Method, KeyIdempotent)
}

// deadlineCut records why failover stopped retrying before its deadline:
// the backoff due after a full pool (SERVER_THREADPOOL_EXHAUSTED) was
// longer than what was left of the caller's deadline.
type deadlineCut struct {
	left    time.Duration // what was left of ctx's deadline
	backoff time.Duration // the backoff the next attempt had to wait first
}

// note is the cut's text on the first line of the call's error, after
// made attempts of retries+1: "; the caller's deadline stopped the
// retries: the 55ms it left was less than the 80ms backoff due after a
// full pool before attempt 4 of 6 (retries=5)". The call did not time
// out: its status stays the last attempt's.
func (c *deadlineCut) note(made, retries int) string {
	return fmt.Sprintf("; the caller's deadline stopped the retries: the %v it left was less than the %v backoff due after a full pool before attempt %d of %d (%s=%d)",
		roundMs(c.left), roundMs(c.backoff), made+1, retries+1, KeyRetries, retries)
}

// roundMs rounds d to the millisecond, at least 1ms.
func roundMs(d time.Duration) time.Duration {
	return max(d.Round(time.Millisecond), time.Millisecond)
}

// Backoff bounds: the wait before the k-th re-ask of a provider whose pool
// was full is uniform in [b/2, b], b = min(BackoffMax, BackoffInitial ×
// 2^(k-1)).
const (
	BackoffInitial = 20 * time.Millisecond
	BackoffMax     = 200 * time.Millisecond
)

// Backoff returns the wait before the k-th (k >= 1) re-ask of a provider
// that answered SERVER_THREADPOOL_EXHAUSTED: exponential backoff as gRPC's
// retry policy (initial BackoffInitial, ×2 per wait, capped at
// BackoffMax), with "equal jitter" (uniform in the upper half) instead of
// gRPC's full jitter, so that the waits have a floor: retries=5 spread
// over 250–500 ms, retries=2 over 30–60 ms, the time a pool of a few
// threads busy with calls of tens of milliseconds takes to drain, where
// full jitter may spend every retry in the first milliseconds.
func Backoff(k int) time.Duration {
	b := BackoffMax
	if k >= 1 && k < 8 {
		b = min(BackoffMax, BackoffInitial<<(k-1))
	}
	return b/2 + rand.N(b/2+1)
}

// sleep waits d, and reports false at once, without waiting, when ctx's
// deadline comes sooner, or as soon as ctx ends.
func sleep(ctx context.Context, d time.Duration) bool {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// deadlinePassed reports whether ctx is done or its deadline has passed.
// The exchange times a call out by a timer of its own, which may fire
// before ctx's: a SERVER_TIMEOUT that the caller's deadline caused can
// come back while ctx.Err() is still nil. Called on the retry path only.
func deadlinePassed(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// exhausted wraps err, the failure the call ends with, keeping its
// status and cause (errors.Is); errs[i] is the failure of the attempt on
// tried[i]. The message counts the attempts and names each provider once,
// with its count when it took several (clusterkit.Addresses). One attempt
// (retries left unused: its failure would repeat) is one line ending in
// err: "failover: demo.Echo.Echo failed after 1 attempt on
// [127.0.0.1:24998]: CHANNEL_INACTIVE: ...". Several are a first line
// with the outcome, then one indented line per attempt
// (clusterkit.FailureLines, as forking's forks):
//
//	failover: t.Svc.Work failed after 3 attempts on [10.0.0.1:20880 (3 times)]; the status is attempt 1's, the last that may have run (the 2 attempts after it did not run):
//	  attempt 1, 10.0.0.1:20880: SERVER_TIMEOUT: exchange: timed out after 1s waiting for the response
//	  attempt 2, 10.0.0.1:20880: CLIENT_TIMEOUT: exchange: timed out after 1s before the request was written (withdrawn, never sent)
//	  attempt 3, 10.0.0.1:20880: CLIENT_TIMEOUT: exchange: timed out after 1s before the request was written (withdrawn, never sent)
//
// unrun > 0 attempts after err's certainly did not run (err's is the
// last that may have run); note (notRetriedNote) ends the first line.
func exhausted(inv *spi.Invocation, tried []spi.Invoker, errs []error, err error, unrun int, note string) error {
	head := fmt.Sprintf("failover: %s.%s failed after %s on %s", inv.Service, inv.Method, clusterkit.Count(len(tried), "attempt"), clusterkit.Addresses(tried))
	if len(tried) < 2 {
		return &spi.Error{Status: spi.StatusOf(err), Message: fmt.Sprintf("%s: %v%s", head, err, note), Cause: err}
	}
	if unrun > 0 {
		head += fmt.Sprintf("; the status is attempt %d's, the last that may have run (the %s after it did not run)", len(tried)-unrun, attemptsNoun(unrun))
	}
	return &spi.Error{Status: spi.StatusOf(err), Message: clusterkit.FailureLines(inv, head+note, "attempt", tried, errs), Cause: err}
}

// attemptsNoun is "attempt" for 1, "n attempts" otherwise, after "the".
func attemptsNoun(n int) string {
	if n == 1 {
		return "attempt"
	}
	return clusterkit.Count(n, "attempt")
}

// Repeats reports whether err is a connection-level failure that the same
// provider would certainly give again if asked at once, so that failover
// does not retry that provider (others still may be): its TLS certificate
// failed verification (tls.CertificateVerificationError, or x509's
// unknown authority, host name and invalid certificate errors), or its
// dial was refused (ECONNREFUSED: nothing listens there), or the kernel
// could not connect to it at all (spi.ErrNotConnected: a dial, handshake
// or first ping that failed), or it is shutting down
// (spi.ErrProviderShutdown: its go-away, spi.ErrGoAway, which runs no new
// call on that connection, or a call its shutdown timeout abandoned,
// answered SERVER_ERROR "shut down ... abandoned"). The kernel's
// connection redials a down provider at most every 500 ms when calls ask,
// so a retry at once gets that same error back.
func Repeats(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, spi.ErrProviderShutdown) {
		return true
	}
	if errors.Is(err, spi.ErrNotConnected) && !errors.Is(err, spi.ErrRequestSent) {
		return true
	}
	var (
		verify   *tls.CertificateVerificationError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	if errors.As(err, &verify) || errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, spi.ErrRequestSent)
}

// Retryable reports whether a failed call may run elsewhere: see the
// package doc. Every failure that certainly did not run on the provider
// (clusterkit.DidNotRun: a dial refused or failed, CHANNEL_INACTIVE before
// the request was sent, CLIENT_TIMEOUT, SERVER_THREADPOOL_EXHAUSTED,
// SERVICE_NOT_FOUND) counts; SERVER_TIMEOUT (the request reached the
// provider), SERVER_ERROR (the provider failed while running it: a panic,
// a shutdown that abandoned it, or the method's own "this node is
// unwell") and CHANNEL_INACTIVE after the request was sent
// (spi.ErrRequestSent) count only when idempotent is true, as Dubbo's
// failover retries them (it retries every non-business RpcException,
// idempotent or not). Errors caused by the caller's context never do,
// nor does a CLIENT_TIMEOUT whose request took the whole timeout to
// encode (spi.ErrEncodeTimedOut): it would time out encoding again on
// any provider, a failure of the consumer's own, as SERIALIZATION_ERROR.
func Retryable(err error, idempotent bool) bool {
	if errors.Is(err, spi.ErrEncodeTimedOut) {
		return false
	}
	if clusterkit.DidNotRun(err) {
		return true
	}
	if !idempotent || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var e *spi.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Status {
	case spi.StatusChannelInactive, spi.StatusServerTimeout, spi.StatusServerError:
		// the provider got the request: it may have run it, or part of it
		return true
	}
	return false
}

// Interface guards.
var (
	_ spi.ClusterBuilder = Builder{}
	_ spi.Cluster        = (*Cluster)(nil)
)
