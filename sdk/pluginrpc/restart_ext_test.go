package pluginrpc_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// switchSource stands in for the host's supervisor: it hands out the client
// of the current "process" and signals every change.
type switchSource struct {
	mu      sync.Mutex
	c       *pluginrpc.Client
	gen     uint64
	err     error
	changed chan struct{}
}

func (s *switchSource) Current() (*pluginrpc.Client, uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c, s.gen, s.err
}

func (s *switchSource) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

func (s *switchSource) set(c *pluginrpc.Client, err error) {
	s.mu.Lock()
	s.c, s.err = c, err
	if c != nil {
		s.gen++
	}
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// serveRegistry serves a fresh memory registry backend in process, like a
// newly started plugin process.
func serveRegistry(t *testing.T) (*pluginrpc.Client, func()) {
	impl := pluginrpc.Impl{Registry: memory.NewBuilder()}
	client, server := plugin.TestPluginGRPCConn(t, false, pluginrpc.ServerPlugins(impl)[pluginrpc.ProtocolVersion])
	raw, err := client.Dispense(pluginrpc.PointRegistry)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() { once.Do(func() { server.Stop(); _ = client.Close() }) }
	t.Cleanup(stop)
	return raw.(*pluginrpc.Client), stop
}

// After a restart (a new process with an empty backend) the adapter
// rebuilds the registry there, registers its URLs again, and its
// subscription resumes without ever pushing an empty list.
func TestRegistryComesBackAfterRestart(t *testing.T) {
	c1, stop1 := serveRegistry(t)
	src := &switchSource{c: c1, gen: 1, changed: make(chan struct{})}
	rb := pluginrpc.NewRegistryBuilder(pluginrpc.RegistryOptions{Name: "memory", Source: src, Retry: 10 * time.Millisecond})
	provider, _ := rb.Build(spi.MustParse("memory://"))
	defer provider.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pu := spi.MustParse("airnode://127.0.0.1:20880/demo.Echo?side=provider")
	if err := provider.Register(ctx, pu); err != nil {
		t.Fatal(err)
	}
	consumer := spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer")
	lists := make(chan int, 64)
	sub, err := provider.Subscribe(ctx, consumer, func(l []spi.URL) { lists <- len(l) })
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	if n := <-lists; n != 1 {
		t.Fatalf("first list: %d providers", n)
	}

	stop1() // the plugin process dies
	src.set(nil, spi.Errorf(spi.StatusServerError, "plugin down"))
	if _, err := provider.Lookup(ctx, consumer); err == nil {
		t.Fatal("Lookup while down succeeded")
	}
	c2, _ := serveRegistry(t) // restarted: empty backend
	src.set(c2, nil)

	deadline := time.Now().Add(5 * time.Second)
	for {
		l, err := provider.Lookup(ctx, consumer)
		if err == nil && len(l) == 1 && l[0].Equal(pu) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("provider not re-registered after restart: %v, %v", l, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case n := <-lists:
		if n != 1 {
			t.Fatalf("list after restart has %d providers", n)
		}
	case <-ctx.Done():
		t.Fatal("subscription did not resume after restart")
	}
}

// pickyBuilder rejects URLs with a "bad" key and always picks the last
// invoker.
type pickyBuilder struct{}

func (pickyBuilder) Name() string { return "picky" }
func (pickyBuilder) Build(u spi.URL) (spi.LoadBalance, error) {
	if _, bad := u.Param("bad"); bad {
		return nil, spi.Errorf(spi.StatusBadRequest, "picky: key bad not allowed")
	}
	return pickLast{}, nil
}

type pickLast struct{}

func (pickLast) Select(invokers []spi.Invoker, _ *spi.Invocation) spi.Invoker {
	return invokers[len(invokers)-1]
}

type pickFirst struct{}

func (pickFirst) Select(invokers []spi.Invoker, _ *spi.Invocation) spi.Invoker { return invokers[0] }

type stubInvoker struct {
	spi.Invoker
	u spi.URL
}

func (s *stubInvoker) URL() spi.URL      { return s.u }
func (s *stubInvoker) Available() bool   { return true }
func (s *stubInvoker) Stats() *spi.Stats { return &spi.Stats{} }

func TestLoadBalanceBuildErrorsAndFallback(t *testing.T) {
	impl := pluginrpc.Impl{LoadBalance: pickyBuilder{}}
	client, server := plugin.TestPluginGRPCConn(t, false, pluginrpc.ServerPlugins(impl)[pluginrpc.ProtocolVersion])
	defer func() { server.Stop(); _ = client.Close() }()
	raw, _ := client.Dispense(pluginrpc.PointLoadBalance)
	src := &switchSource{c: raw.(*pluginrpc.Client), gen: 1, changed: make(chan struct{})}
	var fallbacks int
	var mu sync.Mutex
	b := pluginrpc.NewLoadBalanceBuilder(pluginrpc.LoadBalanceOptions{
		Name: "picky", Source: src,
		Fallback:   func(spi.URL) (spi.LoadBalance, error) { return pickFirst{}, nil },
		OnFallback: func(error) { mu.Lock(); fallbacks++; mu.Unlock() },
	})
	if _, err := b.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?bad=1")); err == nil ||
		err.Error() != `loadbalance "picky": BAD_REQUEST: picky: key bad not allowed` {
		t.Fatalf("Build err = %v", err)
	}
	lb, err := b.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	list := []spi.Invoker{
		&stubInvoker{u: spi.MustParse("airnode://127.0.0.1:1/demo.Echo")},
		&stubInvoker{u: spi.MustParse("airnode://127.0.0.2:1/demo.Echo")},
	}
	if lb.Select(list, &spi.Invocation{Method: "Echo"}) != list[1] {
		t.Fatal("plugin's choice not used")
	}
	src.set(nil, spi.Errorf(spi.StatusServerError, "plugin down"))
	if lb.Select(list, &spi.Invocation{Method: "Echo"}) != list[0] {
		t.Fatal("fallback not used while the plugin is down")
	}
	mu.Lock()
	defer mu.Unlock()
	if fallbacks != 1 {
		t.Fatalf("OnFallback called %d times", fallbacks)
	}
}
