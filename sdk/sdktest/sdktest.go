package sdktest

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// Connect serves p in process and returns the host side of the connection,
// dispensed for point (a pluginrpc point name). The connection is closed by
// t.Cleanup.
func Connect(t testing.TB, p sdk.Plugins, point string) *pluginrpc.Client {
	t.Helper()
	c, _ := connect(t, p, point)
	return c
}

// connect is Connect that also returns what the plugin declared for point
// (name, activation, URL keys), as the host reads it at the plugin's start.
// It serves p's points on a gRPC server over an in-memory listener, as
// sdk.Serve registers them on go-plugin's, and connects to it as the host
// does, without go-plugin's TestPluginGRPCConn, whose logger writes its
// DEBUG lines ("stdio: received EOF") to the test's output at every
// cleanup (tester F19).
func connect(t testing.TB, p sdk.Plugins, point string) (*pluginrpc.Client, pluginrpc.Description) {
	t.Helper()
	impl, err := p.Impl()
	if err != nil {
		t.Fatal(err)
	}
	set := pluginrpc.ServerPlugins(impl)[pluginrpc.ProtocolVersion]
	served, ok := set[point].(plugin.GRPCPlugin)
	if !ok {
		t.Fatalf("sdktest: dispense %s: the plugin does not provide it", point)
	}
	lis := bufconn.Listen(1 << 20)
	server := grpc.NewServer(grpc.MaxRecvMsgSize(pluginrpc.MaxMessage), grpc.MaxSendMsgSize(pluginrpc.MaxMessage))
	for _, sp := range set {
		if err := sp.(plugin.GRPCPlugin).GRPCServer(nil, server); err != nil {
			t.Fatalf("sdktest: %v", err)
		}
	}
	serving := make(chan struct{})
	go func() {
		defer close(serving)
		_ = server.Serve(lis)
	}()
	conn, err := grpc.NewClient("passthrough:///sdktest",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(pluginrpc.MaxMessage), grpc.MaxCallSendMsgSize(pluginrpc.MaxMessage)))
	if err != nil {
		server.Stop()
		<-serving
		t.Fatalf("sdktest: %v", err)
	}
	// exited is the plugin process's end for the client (Client.Done):
	// the server's, at cleanup
	exited, exit := context.WithCancel(context.Background())
	t.Cleanup(func() {
		server.Stop()
		<-serving
		exit()
		_ = conn.Close()
	})
	raw, err := served.GRPCClient(exited, nil, conn)
	if err != nil {
		t.Fatalf("sdktest: dispense %s: %v", point, err)
	}
	c := raw.(*pluginrpc.Client)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := pluginrpc.Describe(ctx, c, point)
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	return c, d
}

// LoadBalance returns b as the host sees it when b runs in a plugin: a
// builder whose balancers select over gRPC and that declares the URL keys
// b declares (spi.KeyDescriber, sent over the plugin protocol), so that a
// catalog holding it counts them in its typo warnings and key listings as
// the host's does, and that sends no arguments when b says it does not
// read them (sdk.ArgumentsReader). Failures of the plugin call, and a
// Select that does not answer within SelectBound, fail the test instead
// of falling back.
func LoadBalance(t testing.TB, b spi.LoadBalanceBuilder) spi.LoadBalanceBuilder {
	t.Helper()
	c, d := connect(t, sdk.Plugins{LoadBalance: b}, pluginrpc.PointLoadBalance)
	return patientBuilder{newLoadBalanceBuilder(t, b, c, d)}
}

// SelectBound is how long LoadBalance's balancers give one plugin Select:
// 10 s, where a host gives it the call's timeout (1 s by default), so
// that a loaded CI machine (the race detector, parallel packages) does
// not fail the test with a slow round trip. The candidates the plugin
// sees carry timeout=10s for it.
const SelectBound = 10 * time.Second

func newLoadBalanceBuilder(t testing.TB, b spi.LoadBalanceBuilder, c *pluginrpc.Client, d pluginrpc.Description) spi.LoadBalanceBuilder {
	return pluginrpc.NewLoadBalanceBuilder(pluginrpc.LoadBalanceOptions{
		Name:       b.Name(),
		Source:     pluginrpc.StaticSource(c),
		OnFallback: func(err error) { t.Errorf("sdktest: plugin Select failed: %v", err) },
		OnBypass: func(b pluginrpc.Bypass) {
			if !b.Recovered && b.Err == nil { // errors failed the test through OnFallback
				t.Errorf("sdktest: plugin %s did not answer within %v", b.Point, b.Bound)
			}
		},
		Timeout:     SelectBound,
		WithoutArgs: d.WithoutArgs,
		Keys:        d.Keys,
	})
}

// patientBuilder builds balancers that raise the candidates' timeout to
// SelectBound for the plugin round trip (which the call's timeout bounds).
type patientBuilder struct{ spi.LoadBalanceBuilder }

func (b patientBuilder) Keys() []spi.KeyDoc {
	if k, ok := b.LoadBalanceBuilder.(spi.KeyDescriber); ok {
		return k.Keys()
	}
	return nil
}

func (b patientBuilder) Build(u spi.URL) (spi.LoadBalance, error) {
	lb, err := b.LoadBalanceBuilder.Build(u)
	if err != nil {
		return nil, err
	}
	return patientBalancer{lb}, nil
}

type patientBalancer struct{ lb spi.LoadBalance }

// Select asks the plugin with every candidate's timeout set to
// SelectBound and returns the candidate it picked from invokers.
func (p patientBalancer) Select(invokers []spi.Invoker, inv *spi.Invocation) spi.Invoker {
	w := make([]spi.Invoker, len(invokers))
	for i, x := range invokers {
		w[i] = &patientInvoker{x, x.URL().With("timeout", SelectBound.String())}
	}
	got := p.lb.Select(w, inv)
	for i := range w {
		if w[i] == got {
			return invokers[i]
		}
	}
	return got // nil: nothing selectable
}

type patientInvoker struct {
	spi.Invoker
	url spi.URL
}

func (x *patientInvoker) URL() spi.URL { return x.url }

// Registry returns b as the host sees it when b runs in a plugin, declaring
// the URL keys b declares (as LoadBalance).
func Registry(t testing.TB, b spi.RegistryBuilder) spi.RegistryBuilder {
	t.Helper()
	c, d := connect(t, sdk.Plugins{Registry: b}, pluginrpc.PointRegistry)
	return pluginrpc.NewRegistryBuilder(pluginrpc.RegistryOptions{Name: b.Name(), Source: pluginrpc.StaticSource(c), Keys: d.Keys})
}

// Filter returns b as the host sees it when b runs in a plugin: with the
// activation and the URL keys b declares, as they crossed the plugin
// protocol (as LoadBalance).
func Filter(t testing.TB, b spi.FilterBuilder) spi.FilterBuilder {
	t.Helper()
	c, d := connect(t, sdk.Plugins{Filter: b}, pluginrpc.PointFilter)
	return pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: b.Name(), Activation: d.Activation, Source: pluginrpc.StaticSource(c), Keys: d.Keys,
		WithoutArgs: d.WithoutArgs, Chain: d.Chain})
}

// TestFilter runs spitest.TestFilter, the filter conformance suite,
// against b served over gRPC (Filter): among its checks, a filter with
// nothing to do calls next once and returns next's result unchanged, an
// error of next reaching the caller with its status. A builder whose
// ResultReader answers false is checked as the gate it says it is.
func TestFilter(t *testing.T, b spi.FilterBuilder, opts ...spitest.FilterOptions) {
	t.Helper()
	spitest.TestFilter(t, Filter(t, b), opts...)
}

// Service returns an invoker for the service s as the host sees it when s
// runs in a plugin; arguments and results travel as msgpack.
func Service(t testing.TB, s sdk.Service) spi.Invoker {
	t.Helper()
	c := Connect(t, sdk.Plugins{Services: []sdk.Service{s}}, pluginrpc.PointService)
	u, err := spi.NewURL("airnode", "127.0.0.1", 0, s.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pluginrpc.NewServiceInvoker(pluginrpc.ServiceOptions{Service: s.Name, URL: u, Source: pluginrpc.StaticSource(c)})
}

// TestLoadBalance runs spitest.TestLoadBalance against b served over gRPC.
func TestLoadBalance(t *testing.T, b spi.LoadBalanceBuilder) {
	t.Helper()
	spitest.TestLoadBalance(t, LoadBalance(t, b))
}

// TestRegistry runs spitest.TestRegistry against registries built by b
// from u, served over gRPC. Registries built by b from u must share one
// backend (as spitest requires).
//
// It also checks that the plugin protocol carries a Subscribe error to
// the caller at once, with its status (SubscribeErrorCrosses): b's
// registries, built from u, with a Subscribe that fails.
func TestRegistry(t *testing.T, b spi.RegistryBuilder, u spi.URL) {
	t.Helper()
	spitest.TestRegistry(t, builds(t, b, u))
	t.Run("SubscribeErrorCrosses", func(t *testing.T) { subscribeErrorCrosses(t, b, u) })
}

// subscribeErrorCrosses serves b with every registry's Subscribe failing
// with a CLIENT_ERROR and checks that Subscribe through the plugin
// protocol returns that error, status and message, well within
// spitest.RegistryWait: the host once returned a subscription before the
// plugin's Subscribe answered and dropped its error, so the caller waited
// for a list that never came (tester73 #1).
func subscribeErrorCrosses(t *testing.T, b spi.RegistryBuilder, u spi.URL) {
	const msg = "sdktest: Subscribe refused on purpose"
	r, err := Registry(t, failingSubscribe{b, msg}).Build(u)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	consumer, err := spi.NewURL("consumer", "127.0.0.1", 0, "sdktest.SubscribeError", map[string]string{spi.KeySide: "consumer"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), spitest.RegistryWait)
	defer cancel()
	sub, err := r.Subscribe(ctx, consumer, func([]spi.URL) {})
	if sub != nil {
		sub.Stop()
	}
	var se *spi.Error
	switch {
	case err == nil:
		t.Fatal("Subscribe through the plugin protocol succeeded; the plugin's Subscribe failed: its error must reach the caller")
	case ctx.Err() != nil:
		t.Fatalf("Subscribe through the plugin protocol returned only when its context ended (%v); the plugin's Subscribe failed at once", err)
	case !errors.As(err, &se) || se.Status != spi.StatusClientError || !strings.Contains(err.Error(), msg):
		t.Fatalf("Subscribe through the plugin protocol: %v; want the plugin's CLIENT_ERROR %q", err, msg)
	}
}

// failingSubscribe builds b's registries with a Subscribe that fails
// with CLIENT_ERROR msg.
type failingSubscribe struct {
	spi.RegistryBuilder
	msg string
}

func (f failingSubscribe) Build(u spi.URL) (spi.Registry, error) {
	r, err := f.RegistryBuilder.Build(u)
	if err != nil {
		return nil, err
	}
	return failingRegistry{r, f.msg}, nil
}

type failingRegistry struct {
	spi.Registry
	msg string
}

func (f failingRegistry) Subscribe(context.Context, spi.URL, spi.NotifyFunc) (spi.Subscription, error) {
	return nil, spi.Errorf(spi.StatusClientError, "%s", f.msg)
}

// TestReadOnlyRegistry runs spitest.TestReadOnlyRegistry against
// registries built by b from u, served over gRPC: the subset for a
// registry that discovers providers but cannot register them (its
// Register answers spi.ErrNotSupported; its builder should say so with
// ReadOnly, spi.ReadOnlyRegistry), which TestRegistry does not fit.
// publish makes the backend those registries read list exactly providers
// (write the file, fill the catalogue); nil runs only the checks that
// need no backend change. It also runs TestRegistry's
// SubscribeErrorCrosses.
func TestReadOnlyRegistry(t *testing.T, b spi.RegistryBuilder, u spi.URL, publish func(t *testing.T, providers []spi.URL)) {
	t.Helper()
	spitest.TestReadOnlyRegistry(t, builds(t, b, u), publish)
	t.Run("SubscribeErrorCrosses", func(t *testing.T) { subscribeErrorCrosses(t, b, u) })
}

// builds returns a function building a registry from u with b served over
// gRPC (Registry), for the registry suites.
func builds(t *testing.T, b spi.RegistryBuilder, u spi.URL) func(t *testing.T) spi.Registry {
	rb := Registry(t, b)
	return func(t *testing.T) spi.Registry {
		r, err := rb.Build(u)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}
