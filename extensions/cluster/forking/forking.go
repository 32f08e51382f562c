package forking

import (
	"context"
	"fmt"
	"maps"
	"reflect"

	"github.com/airnode/airnode/extensions/cluster/internal/clusterkit"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, the value of the URL key "cluster".
const Name = "forking"

// Builder builds forking clusters. The zero value is ready to use.
type Builder struct{}

// Name returns "forking".
func (Builder) Name() string { return Name }

// Build validates forks, service-level and for every method that sets it;
// a malformed value is a *spi.ParamError naming the key and the value.
func (Builder) Build(u spi.URL) (spi.Cluster, error) {
	def, err := parseForks(u, "")
	if err != nil {
		return nil, err
	}
	c := &Cluster{forks: def}
	for _, m := range u.MethodsSetting(KeyForks) {
		n, err := parseForks(u, m)
		if err != nil {
			return nil, err
		}
		if c.methods == nil {
			c.methods = make(map[string]forks)
		}
		c.methods[m] = n
	}
	return c, nil
}

// Cluster is a forking cluster.
type Cluster struct {
	forks   forks
	methods map[string]forks // read-only after Build

	// providers caches each provider invoker's own forks, read when the
	// reference sets none for the method.
	providers clusterkit.PerInvoker[providerForks]
}

// forksOf returns method's forks: the reference's, else those of x, the
// provider picked first (its invoker's URL: methods.<m>.forks or
// <m>.forks, then forks), else DefaultForks.
func (c *Cluster) forksOf(method string, x spi.Invoker) int {
	f := c.forks
	if m, ok := c.methods[method]; ok {
		f = m
	}
	if f.own {
		return f.n
	}
	return c.providers.Get(x, parseProviderForks).of(method)
}

// Invoke calls up to forks providers at once and returns the first success.
// When every fork fails, the failure is an *spi.Error with the status of
// the last fork to fail that counts the forks and names their providers,
// in the order picked: "forking: demo.Echo.Echo: 2 of 2 forks failed on
// [10.0.0.1:20880, 10.0.0.2:20880]; the last: SERVER_TIMEOUT: ..." (its
// Cause is that fork's error, for errors.Is and errors.As); when some
// fork may have run (clusterkit.DidNotRun false) and others certainly did
// not, the status and Cause are those of the last that may have run and
// the others are counted: "...; the last that may have run:
// SERVER_TIMEOUT: ...; 1 did not run: SERVICE_NOT_FOUND: ...", so that a
// "not sent" status never invites a resend of a call that may have run.
// With one fork the provider's error comes back as it is.
func (c *Cluster) Invoke(ctx context.Context, inv *spi.Invocation, dir spi.Directory, lb spi.LoadBalance) spi.Result {
	list := dir.List(inv)
	if len(list) == 0 {
		return spi.Result{Err: clusterkit.NoProvider(inv, dir, "")}
	}
	var picked []spi.Invoker
	var selErr error
	forks := 1 // until the first pick, whose provider may set forks
	for len(picked) < forks {
		cand := clusterkit.Exclude(list, picked)
		if len(cand) == 0 {
			break
		}
		x, err := clusterkit.Select(ctx, lb, dir, cand, inv)
		if err != nil {
			selErr = err // the balancer could not pick in time
			break
		}
		if x == nil {
			break
		}
		picked = append(picked, x)
		if len(picked) == 1 {
			forks = c.forksOf(inv.Method, x)
		}
	}
	switch len(picked) {
	case 0:
		if selErr != nil {
			return spi.Result{Err: selErr}
		}
		return spi.Result{Err: clusterkit.NoneSelected(inv, dir, lb, list)}
	case 1:
		return picked[0].Invoke(ctx, inv)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type outcome struct {
		r   spi.Result
		inv *spi.Invocation
	}
	done := make(chan outcome, len(picked)) // never blocks a fork
	for _, x := range picked {
		fork := copyInvocation(inv)
		go func() { done <- outcome{x.Invoke(ctx, fork), fork} }()
	}
	var last, ran spi.Result // the last fork to fail; the last that may have run
	var unrun []error        // failures of forks that certainly did not run
	for range picked {
		o := <-done
		if o.r.Err == nil {
			if freshReply(inv) {
				reflect.ValueOf(inv.Reply).Elem().Set(reflect.ValueOf(o.inv.Reply).Elem())
			}
			return o.r
		}
		last = o.r
		if clusterkit.DidNotRun(o.r.Err) {
			unrun = append(unrun, o.r.Err)
		} else {
			ran = o.r
		}
	}
	if ran.Err == nil || len(unrun) == 0 {
		last.Err = allFailed(inv, picked, "the last", last.Err, nil)
		return last
	}
	// Never a "did not run" status while a fork may have run (failover's rule).
	ran.Err = allFailed(inv, picked, "the last that may have run", ran.Err, unrun)
	return ran
}

// allFailed wraps err, the failure of the fork on picked that which
// names, keeping its status (Invoke's doc); unrun, the failures of the
// forks that did not run when err's may have, are counted after it
// ("; 1 did not run: ERR", "; 2 did not run, the last: ERR").
func allFailed(inv *spi.Invocation, picked []spi.Invoker, which string, err error, unrun []error) error {
	msg := fmt.Sprintf("forking: %s.%s: %d of %d forks failed on %s; %s: %v",
		inv.Service, inv.Method, len(picked), len(picked), clusterkit.Addresses(picked), which, err)
	switch n := len(unrun); {
	case n == 1:
		msg += fmt.Sprintf("; 1 did not run: %v", unrun[0])
	case n > 1:
		msg += fmt.Sprintf("; %d did not run, the last: %v", n, unrun[n-1])
	}
	return &spi.Error{Status: spi.StatusOf(err), Message: msg, Cause: err}
}

// copyInvocation returns a copy of inv that a fork may modify: own
// attachments and, when inv.Reply is a non-nil pointer, a fresh reply value.
func copyInvocation(inv *spi.Invocation) *spi.Invocation {
	c := *inv
	c.Attachments = maps.Clone(inv.Attachments)
	if freshReply(inv) {
		c.Reply = reflect.New(reflect.TypeOf(inv.Reply).Elem()).Interface()
	}
	return &c
}

// freshReply reports whether forks decode into their own reply values: when
// inv.Reply is a non-nil pointer.
func freshReply(inv *spi.Invocation) bool {
	rv := reflect.ValueOf(inv.Reply)
	return rv.Kind() == reflect.Pointer && !rv.IsNil()
}

// Interface guards.
var (
	_ spi.ClusterBuilder = Builder{}
	_ spi.Cluster        = (*Cluster)(nil)
)
