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
// the last fork to fail (its Cause is that fork's error, for errors.Is
// and errors.As) and a message that counts the forks, names their
// providers and says whose status it has, then lists each fork, in the
// order picked, on a line of its own with its provider and its error, as
// failover lists its attempts (clusterkit.FailureLines):
//
//	forking: demo.Echo.Echo: 2 of 2 forks failed on [10.0.0.1:20880, 10.0.0.2:20880]; the status is fork 2's, the last to fail:
//	  fork 1, 10.0.0.1:20880: SERVER_TIMEOUT: exchange: timed out after 1s waiting for the response
//	  fork 2, 10.0.0.2:20880: SERVER_TIMEOUT: exchange: timed out after 1s waiting for the response
//
// When some fork may have run (clusterkit.DidNotRun false) and others
// certainly did not, the status and Cause are those of the last to fail
// that may have run: "...; the status is fork 1's, the last to fail that
// may have run (1 other fork did not run):", so that a "not sent" status
// never invites a resend of a call that may have run. With one fork the
// provider's error comes back as it is.
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
		i   int // picked[i]'s fork
		r   spi.Result
		inv *spi.Invocation
	}
	done := make(chan outcome, len(picked)) // never blocks a fork
	for i, x := range picked {
		fork := copyInvocation(inv)
		go func() { done <- outcome{i, x.Invoke(ctx, fork), fork} }()
	}
	errs := make([]error, len(picked)) // errs[i]: picked[i]'s failure
	var last, ran outcome              // the last fork to fail; the last that may have run
	unrun := 0                         // forks that certainly did not run
	for range picked {
		o := <-done
		if o.r.Err == nil {
			if freshReply(inv) {
				reflect.ValueOf(inv.Reply).Elem().Set(reflect.ValueOf(o.inv.Reply).Elem())
			}
			return o.r
		}
		errs[o.i] = o.r.Err
		last = o
		if clusterkit.DidNotRun(o.r.Err) {
			unrun++
		} else {
			ran = o
		}
	}
	if ran.r.Err == nil || unrun == 0 {
		last.r.Err = allFailed(inv, picked, errs, last.i, "the last to fail")
		return last.r
	}
	// Never a "did not run" status while a fork may have run (failover's rule).
	ran.r.Err = allFailed(inv, picked, errs, ran.i, fmt.Sprintf("the last to fail that may have run (%s did not run)", clusterkit.Count(unrun, "other fork")))
	return ran.r
}

// allFailed is the failure of a call whose forks on picked all failed,
// errs[i] on picked[i]: fork which's error, its status and cause kept,
// with a message that says so (why: "the last to fail") and lists every
// fork (Invoke's doc).
func allFailed(inv *spi.Invocation, picked []spi.Invoker, errs []error, which int, why string) error {
	head := fmt.Sprintf("forking: %s.%s: %d of %d forks failed on %s; the status is fork %d's, %s",
		inv.Service, inv.Method, len(picked), len(picked), clusterkit.Addresses(picked), which+1, why)
	err := errs[which]
	return &spi.Error{Status: spi.StatusOf(err), Message: clusterkit.FailureLines(inv, head, "fork", picked, errs), Cause: err}
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
