// Package clusterkit holds what the bundled cluster strategies share: the
// "no provider" error, invoker identity and exclusion, which failures
// certainly did not run, and the message of a call that failed on several
// providers (FailureLines: failover's attempts, forking's forks). It allocates only on retry and fork paths.
// (Method-level keys are found with spi.URL.MethodsSetting.)
package clusterkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"slices"
	"strings"
	"syscall"

	"github.com/airnode/airnode/extensions/lb/warmup"
	"github.com/airnode/airnode/spi"
)

// NoProvider returns the error for a call that found no provider to take
// it: StatusServiceNotFound, naming the service key and the registry.
// detail, when not empty, is appended after a colon.
func NoProvider(inv *spi.Invocation, dir spi.Directory, detail string) *spi.Error {
	key := ""
	if inv != nil {
		key = inv.Service
	}
	if key == "" {
		key = dir.URL().ServiceKey()
	}
	msg := fmt.Sprintf("no provider available for %s (registry: %s)", key, dir.Registry())
	if detail != "" {
		msg += ": " + detail
	}
	left := false
	if ig, ok := dir.(interface{ Ignored() []string }); ok {
		if why := ig.Ignored(); len(why) > 0 {
			msg += "; left out: " + strings.Join(why, "; ")
			left = true
		}
	}
	if detail == "" && !left && strings.HasPrefix(strings.ToLower(dir.Registry()), "memory:") {
		msg += "; " + memoryHint
	}
	return &spi.Error{Status: spi.StatusServiceNotFound, Message: msg}
}

// memoryHint names the usual cause of an empty memory:// registry in Go
// code that works in one process: two catalog sets (two
// bundle.Catalogs() calls) whose memory registries never see each other.
const memoryHint = "a memory:// registry is shared only by the nodes built from one catalog set (one bundle.Catalogs() call): a provider exported by a node built from other catalogs is not seen"

// Select picks one of list with lb: SelectContext with the call's ctx
// when lb is an spi.ContextLoadBalance (a plugin balancer, whose round
// trip the call's deadline bounds), else Select. A non-nil error is the
// balancer's own (it could not pick in time), or CLIENT_ERROR for an
// invoker that is not one of list (a balancer's bug: calling it would
// bypass the directory; tester64 got a nil error and an unfilled reply),
// and is the call's result.
func Select(ctx context.Context, lb spi.LoadBalance, dir spi.Directory, list []spi.Invoker, inv *spi.Invocation) (spi.Invoker, error) {
	if c, ok := lb.(spi.ContextLoadBalance); ok {
		return c.SelectContext(ctx, list, inv)
	}
	x := lb.Select(list, inv)
	if x == nil {
		return nil, nil
	}
	if reflect.TypeOf(x).Comparable() {
		// an == per provider (a y of x's type is comparable too)
		for _, y := range list {
			if y == x {
				return x, nil
			}
		}
	} else if slices.ContainsFunc(list, func(y spi.Invoker) bool { return Same(x, y) }) {
		return x, nil
	}
	return nil, spi.Errorf(spi.StatusClientError, "%s returned an invoker that is not among the %d offered (%s): a balancer returns one of its list, or nil",
		balancerName(inv, dir, lb), len(list), x.URL().Address())
}

// weigher reads configured weights for NoneSelected; a malformed weight
// was already logged by the balancer that read it.
var weigher = warmup.New(warmup.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))

// NoneSelected returns the error for lb having picked nothing out of list
// (Select returned nil): StatusServiceNotFound, as NoProvider. When every
// provider's configured weight is 0 (the one case spi.LoadBalance allows
// a nil) it says "all N providers have weight 0" ("the only provider
// has weight 0" for one), N counting every
// provider of dir when it lists them all (All() []spi.Invoker, as the
// kernel's directory does), connected or not; otherwise the balancer
// broke that rule and the message names it, "balancer acme.p2c returned
// no provider out of 2": a third-party balancer's bug is likelier than
// weights the list does not have. The balancer's name is its Name() when
// it has one (a plugin balancer), else the URL key "loadbalance" of the
// method.
func NoneSelected(inv *spi.Invocation, dir spi.Directory, lb spi.LoadBalance, list []spi.Invoker) *spi.Error {
	for _, x := range list {
		if weigher.Configured(x.URL()) > 0 {
			offered := fmt.Sprintf("%d", len(list))
			if a, ok := dir.(interface{ All() []spi.Invoker }); ok {
				if all := len(a.All()); all > len(list) {
					// a retry offers the providers not tried yet; a
					// provider still connecting is not offered
					offered = fmt.Sprintf("the %d offered (%d providers listed)", len(list), all)
				}
			}
			return NoProvider(inv, dir, fmt.Sprintf("%s returned no provider out of %s", balancerName(inv, dir, lb), offered))
		}
	}
	// The count is of the directory's providers when it can list them all
	// (the kernel's directory: All), not of list, the ones connected so far:
	// a weight is in the provider's URL, known before it connects.
	if a, ok := dir.(interface{ All() []spi.Invoker }); ok {
		if all := a.All(); len(all) > len(list) {
			for _, x := range all {
				if weigher.Configured(x.URL()) > 0 {
					return NoProvider(inv, dir, fmt.Sprintf("%s (%d more not connected yet)", weightZero(len(list), "connected provider"), len(all)-len(list)))
				}
			}
			return NoProvider(inv, dir, weightZero(len(all), "provider"))
		}
	}
	return NoProvider(inv, dir, weightZero(len(list), "provider"))
}

// weightZero says that all n providers (what: "provider", "connected
// provider") have weight 0: "all 3 providers have weight 0", "the only
// provider has weight 0".
func weightZero(n int, what string) string {
	if n == 1 {
		return "the only " + what + " has weight 0"
	}
	return fmt.Sprintf("all %d %ss have weight 0", n, what)
}

// balancerName is "balancer " and lb's Name(), else the method's
// "loadbalance" key; "the default balancer" when neither says.
func balancerName(inv *spi.Invocation, dir spi.Directory, lb spi.LoadBalance) string {
	if n, ok := lb.(interface{ Name() string }); ok && n.Name() != "" {
		return "balancer " + n.Name()
	}
	method := ""
	if inv != nil {
		method = inv.Method
	}
	if v, _, ok := dir.URL().MethodParam(method, "loadbalance"); ok && v != "" {
		return "balancer " + v
	}
	return "the default balancer"
}

// Same reports whether a and b are the same invoker, without panicking on
// invokers whose dynamic type is not comparable (those are compared by URL).
func Same(a, b spi.Invoker) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb {
		return false
	}
	if ta == nil || ta.Comparable() {
		return a == b
	}
	return a.URL().Equal(b.URL())
}

// Exclude returns the invokers of list not in used: list itself when used
// is empty, else a new slice, empty when every invoker was used.
func Exclude(list, used []spi.Invoker) []spi.Invoker {
	if len(used) == 0 {
		return list
	}
	out := make([]spi.Invoker, 0, len(list))
	for _, x := range list {
		if !slices.ContainsFunc(used, func(y spi.Invoker) bool { return Same(x, y) }) {
			out = append(out, x)
		}
	}
	return out
}

// DidNotRun reports whether err, the failure of one provider call,
// certainly left the request unrun on that provider: a connection error
// before the request was written (a dial refused or failed: a
// *net.OpError "dial", ECONNREFUSED, spi.ErrNotConnected),
// CHANNEL_INACTIVE without spi.ErrRequestSent, CLIENT_TIMEOUT (never
// sent: withdrawn from the consumer's queue, refused once the deadline
// had passed, or no first connection in time), and the provider's
// refusals before any method ran, SERVER_THREADPOOL_EXHAUSTED and
// SERVICE_NOT_FOUND. An error caused by the caller's context
// (context.Canceled, context.DeadlineExceeded) never counts: its request
// may have gone out. Failover retries these failures whatever the method,
// and a call never fails with one of them when another of its attempts
// may have run (failover's Invoke).
func DidNotRun(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var e *spi.Error
	if errors.As(err, &e) {
		switch e.Status {
		case spi.StatusChannelInactive:
			return !errors.Is(err, spi.ErrRequestSent) // the connection died before the request went out
		case spi.StatusClientTimeout, spi.StatusServerThreadpoolExhausted, spi.StatusServiceNotFound:
			return true
		}
		if e.Status != spi.StatusClientError {
			return false
		}
		// A CLIENT_ERROR may wrap a connection error: look at the cause.
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED)
}

// Addresses lists the addresses of tried, the providers a call was made
// on, in brackets, each once in the order first tried, one tried more than
// once followed by the count: "[10.0.0.1:20880 (3 times), 10.0.0.2:20880]"
// (failover's and forking's messages after more than one provider call).
// Invokers are told apart by address, as the message's reader does.
func Addresses(tried []spi.Invoker) string {
	addrs := make([]string, 0, len(tried))
	times := make([]int, 0, len(tried))
	for _, x := range tried {
		a := x.URL().Address()
		if i := slices.Index(addrs, a); i >= 0 {
			times[i]++
			continue
		}
		addrs = append(addrs, a)
		times = append(times, 1)
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, a := range addrs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a)
		if times[i] > 1 {
			fmt.Fprintf(&b, " (%d times)", times[i])
		}
	}
	b.WriteByte(']')
	return b.String()
}

// MaxFailureLines bounds the per-call lines of FailureLines' message
// (failover's retries and forking's forks may be up to 100).
const MaxFailureLines = 10

// FailureLines returns the message of a call that failed on several
// provider calls (failover's attempts, forking's forks): head, its first
// line (the outcome, the service and method, the providers and whose
// status the error has), then a colon and one indented line per call,
// errs[i] being the failure of the call on tried[i], named noun and its
// number ("attempt", "fork"): its provider and its status and cause,
// without the service, method and address the first line names
// (tester75 #2: three wrapped statuses made a 600-character line):
//
//	failover: t.Svc.Work failed after 2 attempts on [10.0.0.1:20880, 10.0.0.2:20880]:
//	  attempt 1, 10.0.0.1:20880: SERVER_TIMEOUT: exchange: timed out after 1s waiting for the response
//	  attempt 2, 10.0.0.2:20880: SERVER_ERROR: A: this node is unwell
//
// More than MaxFailureLines calls show the first and the last ones and
// how many are left out between them ("  ... 3 attempts not shown").
func FailureLines(inv *spi.Invocation, head, noun string, tried []spi.Invoker, errs []error) string {
	var b strings.Builder
	b.WriteString(head)
	b.WriteByte(':')
	for i, x := range tried {
		if len(tried) > MaxFailureLines && i == MaxFailureLines/2 {
			fmt.Fprintf(&b, "\n  ... %s not shown", Count(len(tried)-MaxFailureLines, noun))
		}
		if len(tried) > MaxFailureLines && i >= MaxFailureLines/2 && i < len(tried)-(MaxFailureLines-MaxFailureLines/2) {
			continue
		}
		addr := x.URL().Address()
		fmt.Fprintf(&b, "\n  %s %d, %s: %s", noun, i+1, addr, failureCause(inv, addr, errs[i]))
	}
	return b.String()
}

// failureCause is err, one call's failure on the provider at addr, for a
// line of FailureLines' message: its status and cause, without the
// service, method and address that message already names ("exchange:
// call t.Svc.Work to 10.0.0.1:20880 timed out ..." reads "exchange:
// timed out ...", as does the provider's "exchange: call t.Svc.Work
// timed out ... on the provider ...").
func failureCause(inv *spi.Invocation, addr string, err error) string {
	sm := inv.Service + "." + inv.Method
	text := err.Error()
	for _, cut := range []string{"call " + sm + " to " + addr + " ", sm + " to " + addr + " "} {
		text = strings.Replace(text, cut, "", 1)
	}
	// "SERVER_ERROR: t.Svc.Work: boom" loses the name that heads its
	// text; one inside a sentence ("panic in t.Svc.Work: boom") stays.
	text = strings.Replace(strings.TrimPrefix(text, sm+": "), ": "+sm+": ", ": ", 1)
	return strings.Replace(text, "call "+sm+" ", "", 1)
}

// Count is "1 " + noun, else n and noun's plural: "1 attempt", "3
// attempts", "2 forks".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
