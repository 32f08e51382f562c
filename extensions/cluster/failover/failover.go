package failover

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/airnode/airnode/extensions/cluster/internal/clusterkit"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, the value of the URL key "cluster".
const Name = "failover"

// Builder builds failover clusters. The zero value is ready to use.
type Builder struct{}

// Name returns "failover".
func (Builder) Name() string { return Name }

// Build validates retries and idempotent, service-level and for every
// method that sets them; a malformed value is a *spi.ParamError naming the
// key and the value.
func (Builder) Build(u spi.URL) (spi.Cluster, error) {
	def, err := parsePolicy(u, "")
	if err != nil {
		return nil, err
	}
	c := &Cluster{def: def}
	for _, m := range clusterkit.MethodsSetting(u, KeyRetries, KeyIdempotent) {
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
// (Repeats: a refused dial, a certificate that failed verification), as
// Dubbo's FailoverClusterInvoker reselects among the invokers not tried
// first. It returns the first success, or the last failure; after more
// than one attempt, or when retries were left unused because every
// provider's failure would repeat at once, the failure is an *spi.Error
// with the last status that lists the providers tried:
// "failover: demo.Echo.Echo failed after 1 attempt on [127.0.0.1:24998]: ...".
func (c *Cluster) Invoke(ctx context.Context, inv *spi.Invocation, dir spi.Directory, lb spi.LoadBalance) spi.Result {
	p := c.policy(inv.Method)
	var (
		tried   []spi.Invoker
		stuck   []spi.Invoker // tried, failed with an error that repeats at once
		last    spi.Result
		skipped bool // retries left unused: every provider's error repeats
	)
	for attempt := 0; attempt <= p.retries; attempt++ {
		if attempt > 0 && ctx.Err() != nil {
			break
		}
		list := dir.List(inv)
		if len(list) == 0 {
			if attempt == 0 {
				return spi.Result{Err: clusterkit.NoProvider(inv, dir, "")}
			}
			break
		}
		pool := list
		if len(stuck) > 0 {
			if pool = clusterkit.Exclude(list, stuck); len(pool) == 0 {
				skipped = true
				break // a retry on any of them would fail the same way at once
			}
		}
		cand := clusterkit.Exclude(pool, tried)
		if len(cand) == 0 {
			if attempt > 0 && refused(last.Err) {
				break // every provider answered "not here": asking again won't change it
			}
			cand = pool // every provider tried: any whose error may change may take the retry
		}
		x, err := clusterkit.Select(ctx, lb, cand, inv)
		if err == nil && x == nil && len(cand) < len(pool) {
			x, err = clusterkit.Select(ctx, lb, pool, inv)
		}
		if err != nil { // the balancer could not pick in time: nothing was sent
			if attempt == 0 {
				return spi.Result{Err: err}
			}
			last = spi.Result{Err: err}
			break
		}
		if x == nil {
			if attempt == 0 {
				return spi.Result{Err: clusterkit.NoneSelected(inv, dir, lb, list)}
			}
			break
		}
		last = x.Invoke(ctx, inv)
		if last.Err == nil {
			return last
		}
		tried = append(tried, x)
		if !Retryable(last.Err, p.idempotent) {
			break
		}
		if Repeats(last.Err) {
			stuck = append(stuck, x)
		}
	}
	if len(tried) > 1 || skipped {
		last.Err = exhausted(inv, tried, last.Err)
	}
	return last
}

// exhausted wraps the last error of the attempts, keeping its status.
func exhausted(inv *spi.Invocation, tried []spi.Invoker, err error) error {
	addrs := make([]string, len(tried))
	for i, x := range tried {
		addrs[i] = x.URL().Address()
	}
	attempts := "1 attempt"
	if len(tried) != 1 {
		attempts = fmt.Sprintf("%d attempts", len(tried))
	}
	return &spi.Error{
		Status:  spi.StatusOf(err),
		Message: fmt.Sprintf("failover: %s.%s failed after %s on [%s]: %v", inv.Service, inv.Method, attempts, strings.Join(addrs, ", "), err),
		Cause:   err,
	}
}

// Repeats reports whether err is a connection-level failure that the same
// provider would certainly give again if asked at once, so that failover
// does not retry that provider (others still may be): its TLS certificate
// failed verification (tls.CertificateVerificationError, or x509's
// unknown authority, host name and invalid certificate errors), or its
// dial was refused (ECONNREFUSED: nothing listens there; the kernel's
// connection redials a down provider at most every 500 ms when calls ask,
// so a retry at once gets that same refusal back).
func Repeats(err error) bool {
	if err == nil {
		return false
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

// refused reports whether err is a provider's own answer that it did not
// run the call (SERVICE_NOT_FOUND, SERVER_THREADPOOL_EXHAUSTED): worth
// retrying on another provider, never on the same one again.
func refused(err error) bool {
	s := spi.StatusOf(err)
	return s == spi.StatusServiceNotFound || s == spi.StatusServerThreadpoolExhausted
}

// Retryable reports whether a failed call certainly did not run on the
// provider, so that running it elsewhere is safe: see the package doc.
// SERVER_TIMEOUT (the request reached the provider) and CHANNEL_INACTIVE
// after the request was sent (spi.ErrRequestSent) count only when
// idempotent is true. Errors caused by the caller's context never do.
func Retryable(err error, idempotent bool) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var e *spi.Error
	if errors.As(err, &e) {
		switch e.Status {
		case spi.StatusChannelInactive:
			// the connection died: before the request went out, or after
			return idempotent || !errors.Is(err, spi.ErrRequestSent)
		case spi.StatusClientTimeout, spi.StatusServerThreadpoolExhausted, spi.StatusServiceNotFound:
			return true
		case spi.StatusServerTimeout:
			return idempotent
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

// Interface guards.
var (
	_ spi.ClusterBuilder = Builder{}
	_ spi.Cluster        = (*Cluster)(nil)
)
