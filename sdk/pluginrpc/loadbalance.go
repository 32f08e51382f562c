package pluginrpc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
	"github.com/airnode/airnode/spi"
)

// ---------------------------------------------------------------- plugin side

type lbServer struct {
	pb.UnimplementedLoadBalanceServer
	b    spi.LoadBalanceBuilder
	h    handles[spi.LoadBalance]
	urls urlCache
}

func newLBServer(b spi.LoadBalanceBuilder) *lbServer { return &lbServer{b: b} }

func (s *lbServer) Describe(context.Context, *pb.Empty) (*pb.Describe, error) {
	return &pb.Describe{Name: s.b.Name(), Keys: keysToPB(s.b)}, nil
}

func (s *lbServer) Build(_ context.Context, req *pb.BuildRequest) (*pb.BuildReply, error) {
	return s.h.buildOnce("loadbalance Build", req.Url, s.b.Build), nil
}

// candidate is the plugin-side stand-in for a host invoker: its URL and a
// copy of its statistics. It cannot invoke.
type candidate struct {
	url       spi.URL
	stats     *spi.Stats
	available bool
}

func (c *candidate) URL() spi.URL { return c.url }
func (c *candidate) Invoke(context.Context, *spi.Invocation) spi.Result {
	return spi.Result{Err: spi.Errorf(spi.StatusClientError, "pluginrpc: a balancer's candidate cannot be invoked")}
}
func (c *candidate) Available() bool   { return c.available }
func (c *candidate) Stats() *spi.Stats { return c.stats }
func (c *candidate) Close() error      { return nil }

var _ spi.Invoker = (*candidate)(nil)

func (s *lbServer) Select(_ context.Context, req *pb.SelectRequest) (rep *pb.SelectReply, _ error) {
	defer func() {
		if r := recover(); r != nil {
			rep = &pb.SelectReply{Index: -1, Error: recovered("loadbalance Select", r)}
		}
	}()
	lb, err := s.h.get(req.Handle)
	if err != nil {
		return &pb.SelectReply{Index: -1, Error: toPB(err)}, nil
	}
	if len(req.Candidates) == 0 {
		return &pb.SelectReply{Index: -1, Error: toPB(spi.Errorf(spi.StatusClientError, "pluginrpc: Select with no candidates"))}, nil
	}
	cands := make([]candidate, len(req.Candidates))
	invokers := make([]spi.Invoker, len(req.Candidates))
	for i, c := range req.Candidates {
		u, err := s.urls.parse(c.Url)
		if err != nil {
			return &pb.SelectReply{Index: -1, Error: toPB(err)}, nil
		}
		cands[i] = candidate{url: u, available: c.Available, stats: spi.StatsFromSnapshot(spi.StatsSnapshot{
			Active: c.Active, Total: c.Total, Failed: c.Failed, Elapsed: time.Duration(c.ElapsedNs),
			MeanResponse: time.Duration(c.MeanResponseNs), MeanCount: c.MeanCount,
		})}
		invokers[i] = &cands[i]
	}
	picked := lb.Select(invokers, fromInvocation(req.Invocation))
	if picked == nil {
		return &pb.SelectReply{Index: -1}, nil // nothing selectable (all weights 0)
	}
	for i := range invokers {
		if invokers[i] == picked {
			return &pb.SelectReply{Index: int32(i)}, nil
		}
	}
	return &pb.SelectReply{Index: -1, Error: toPB(spi.Errorf(spi.StatusClientError, "pluginrpc: balancer %q returned an invoker that was not a candidate", s.b.Name()))}, nil
}

// ---------------------------------------------------------------- host side

// LoadBalanceOptions configure a plugin-backed balancer builder.
type LoadBalanceOptions struct {
	// Name is the extension name in the host's catalog.
	Name string
	// Source yields the plugin's live client.
	Source Source
	// Fallback builds the balancer used while the plugin is down or fails
	// (the point's default); nil picks uniformly at random.
	Fallback func(u spi.URL) (spi.LoadBalance, error)
	// OnFallback is told every time a Select falls back, with why; the host
	// logs it (rate-limited). May be nil.
	OnFallback func(err error)
	// Timeout bounds one Select round trip; default 1s.
	Timeout time.Duration
	// Keys are the URL keys the plugin declared (Description.Keys); the
	// builder reports them as its spi.KeyDescriber. nil: none declared.
	Keys []spi.KeyDoc
}

// NewLoadBalanceBuilder returns a spi.LoadBalanceBuilder whose balancers
// select in the plugin process, falling back to o.Fallback when the plugin
// is down, slow or answers an error.
func NewLoadBalanceBuilder(o LoadBalanceOptions) spi.LoadBalanceBuilder {
	if o.Timeout <= 0 {
		o.Timeout = time.Second
	}
	return &lbBuilder{o: o}
}

type lbBuilder struct{ o LoadBalanceOptions }

func (b *lbBuilder) Name() string { return b.o.Name }

// Keys returns the keys the plugin declared (LoadBalanceOptions.Keys).
func (b *lbBuilder) Keys() []spi.KeyDoc { return declared(b.o.Keys).Keys() }

// Build validates u in the plugin when the plugin is up (the plugin's own
// Build errors are returned); when it is down the balancer builds lazily on
// its first Select after the plugin is back.
func (b *lbBuilder) Build(u spi.URL) (spi.LoadBalance, error) {
	lb := &lbAdapter{o: &b.o, u: u, us: u.String()}
	if c, gen, err := b.o.Source.Current(); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), b.o.Timeout)
		defer cancel()
		var be buildError
		if _, err := lb.handle(ctx, c, gen); errors.As(err, &be) {
			return nil, fmt.Errorf("loadbalance %q: %w", b.o.Name, be.error)
		}
	}
	return lb, nil
}

type buildError struct{ error }

type lbAdapter struct {
	o  *LoadBalanceOptions
	u  spi.URL
	us string

	mu     sync.Mutex
	gen    uint64
	id     uint64
	fbOnce sync.Once
	fb     spi.LoadBalance
}

// handle returns the balancer's handle in plugin generation gen, building it
// there when the plugin (re)started.
func (lb *lbAdapter) handle(ctx context.Context, c *Client, gen uint64) (uint64, error) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	if lb.gen == gen && lb.id != 0 {
		return lb.id, nil
	}
	rep, err := c.LoadBalance.Build(ctx, &pb.BuildRequest{Url: lb.us})
	if err != nil {
		return 0, rpcError("loadbalance Build", err)
	}
	if rep.Error != nil {
		return 0, buildError{fromPB(rep.Error)}
	}
	lb.gen, lb.id = gen, rep.Handle
	return lb.id, nil
}

// Select asks the plugin; on any failure it falls back (and reports why).
func (lb *lbAdapter) Select(invokers []spi.Invoker, inv *spi.Invocation) spi.Invoker {
	i, err := lb.remote(invokers, inv)
	if err == nil {
		if i < 0 {
			return nil
		}
		return invokers[i]
	}
	if lb.o.OnFallback != nil {
		lb.o.OnFallback(err)
	}
	return lb.fallback(invokers, inv)
}

func (lb *lbAdapter) remote(invokers []spi.Invoker, inv *spi.Invocation) (int, error) {
	c, gen, err := lb.o.Source.Current()
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), lb.o.Timeout)
	defer cancel()
	id, err := lb.handle(ctx, c, gen)
	if err != nil {
		return 0, err
	}
	req := &pb.SelectRequest{Handle: id, Candidates: make([]*pb.Candidate, len(invokers)), Invocation: toInvocation(inv)}
	cands := make([]pb.Candidate, len(invokers))
	for i, iv := range invokers {
		c := &cands[i]
		c.Url = iv.URL().String()
		c.Available = iv.Available()
		if st := iv.Stats(); st != nil {
			s := st.Snapshot()
			c.Active, c.Total, c.Failed = s.Active, s.Total, s.Failed
			c.ElapsedNs, c.MeanResponseNs, c.MeanCount = int64(s.Elapsed), int64(s.MeanResponse), s.MeanCount
		}
		req.Candidates[i] = c
	}
	rep, err := c.LoadBalance.Select(ctx, req)
	if err != nil {
		return 0, rpcError("loadbalance Select", err)
	}
	if rep.Error != nil {
		return 0, fromPB(rep.Error)
	}
	if rep.Index == -1 {
		return -1, nil // the balancer selected nothing
	}
	if rep.Index < 0 || int(rep.Index) >= len(invokers) {
		return 0, fmt.Errorf("plugin loadbalance Select: index %d out of range [0, %d)", rep.Index, len(invokers))
	}
	return int(rep.Index), nil
}

func (lb *lbAdapter) fallback(invokers []spi.Invoker, inv *spi.Invocation) spi.Invoker {
	lb.fbOnce.Do(func() {
		if lb.o.Fallback != nil {
			lb.fb, _ = lb.o.Fallback(lb.u)
		}
	})
	if lb.fb != nil {
		return lb.fb.Select(invokers, inv)
	}
	return invokers[rand.IntN(len(invokers))]
}

var (
	_ spi.LoadBalanceBuilder = (*lbBuilder)(nil)
	_ spi.LoadBalance        = (*lbAdapter)(nil)
)
