package pluginrpc

import (
	"context"
	"errors"

	"github.com/airnode/airnode/spi"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
)

// ProtocolVersion is the plugin protocol version this build speaks (the
// go-plugin application protocol, negotiated from VersionedPlugins).
const ProtocolVersion = 1

// MaxMessage bounds one gRPC message between host and plugin, in bytes:
// twice airnode's default payload (8 MiB) so a full frame's arguments fit.
const MaxMessage = 16 << 20

// Points a plugin may serve. Transport, codec and heartbeat stay in process:
// a local RPC per frame would defeat them.
const (
	PointLoadBalance = "loadbalance"
	PointRegistry    = "registry"
	PointFilter      = "filter"
	PointService     = "service"
)

// Points lists every point a plugin may serve, sorted.
var Points = []string{PointFilter, PointLoadBalance, PointRegistry, PointService}

// Handshake is the go-plugin handshake shared by host and plugins. The magic
// cookie is not a secret: it only stops a plugin binary started by hand from
// waiting forever for a host.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "AIRNODE_PLUGIN",
	MagicCookieValue: "f3b2c6a1-airnode-plugin-7e0d",
}

// EnvLogLevel names the environment variable that sets a plugin
// process's log level (trace, debug, info, warn, error; default info;
// sdk.EnvLogLevel). The host sets it to debug for its plugins when it
// logs at debug itself and neither its environment nor the plugin's env
// in plugins.yaml sets it.
const EnvLogLevel = "AIRNODE_PLUGIN_LOG"

// HandoverKey is the attribute of the log record by which a plugin asks
// its host to hand its calls over to a new process of its binary (the sdk
// logs it on a SIGTERM the host did not send: an operator's polite
// restart, an upgrade in place). The host, unless it is closing, starts a
// new process, sends every new call to it once it runs, lets the calls in
// flight in the old one finish and then closes the old one. Its value
// says why ("sigterm").
const HandoverKey = "airnode_handover"

// Impl is what a plugin process serves; nil fields are not served.
type Impl struct {
	LoadBalance spi.LoadBalanceBuilder
	Registry    spi.RegistryBuilder
	Filter      spi.FilterBuilder
	Service     ServiceHandler
}

// ServerPlugins returns the versioned plugin sets a plugin process serves
// for impl.
func ServerPlugins(impl Impl) map[int]plugin.PluginSet {
	set := plugin.PluginSet{}
	if impl.LoadBalance != nil {
		s := newLBServer(impl.LoadBalance)
		set[PointLoadBalance] = &grpcPlugin{register: func(g *grpc.Server) { pb.RegisterLoadBalanceServer(g, s) }}
	}
	if impl.Registry != nil {
		s := newRegistryServer(impl.Registry)
		set[PointRegistry] = &grpcPlugin{register: func(g *grpc.Server) { pb.RegisterRegistryServer(g, s) }}
	}
	if impl.Filter != nil {
		s := newFilterServer(impl.Filter)
		set[PointFilter] = &grpcPlugin{register: func(g *grpc.Server) { pb.RegisterFilterServer(g, s) }}
	}
	if impl.Service != nil {
		s := &serviceServer{h: impl.Service}
		set[PointService] = &grpcPlugin{register: func(g *grpc.Server) { pb.RegisterServiceServer(g, s) }}
	}
	return map[int]plugin.PluginSet{ProtocolVersion: set}
}

// ClientPlugins returns the versioned plugin sets a host offers; dispensing
// any point yields a *Client.
func ClientPlugins() map[int]plugin.PluginSet {
	set := plugin.PluginSet{}
	for _, p := range Points {
		set[p] = &grpcPlugin{}
	}
	return map[int]plugin.PluginSet{ProtocolVersion: set}
}

// grpcPlugin is one go-plugin plugin: server side it registers a gRPC
// service, host side it returns a *Client.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	register func(*grpc.Server)
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.register == nil {
		return errors.New("pluginrpc: host-side plugin cannot serve")
	}
	p.register(s)
	return nil
}

func (p *grpcPlugin) GRPCClient(ctx context.Context, _ *plugin.GRPCBroker, cc *grpc.ClientConn) (any, error) {
	return NewClient(ctx, cc), nil
}

// Client is a host's connection to one plugin process: one gRPC client per
// point over the same connection. Safe for concurrent use.
type Client struct {
	LoadBalance pb.LoadBalanceClient
	Registry    pb.RegistryClient
	Filter      pb.FilterClient
	Service     pb.ServiceClient
	health      grpc_health_v1.HealthClient
	done        <-chan struct{}
}

// NewClient wraps cc; ctx ends when the plugin process has exited.
func NewClient(ctx context.Context, cc grpc.ClientConnInterface) *Client {
	return &Client{
		LoadBalance: pb.NewLoadBalanceClient(cc),
		Registry:    pb.NewRegistryClient(cc),
		Filter:      pb.NewFilterClient(cc),
		Service:     pb.NewServiceClient(cc),
		health:      grpc_health_v1.NewHealthClient(cc),
		done:        ctx.Done(),
	}
}

// Ping asks the plugin process's gRPC health service (which go-plugin's
// server runs beside the plugin's own services) whether it serves, as
// go-plugin's Ping does, but bounded by ctx: a plugin process that is
// stopped (SIGSTOP), or too busy to answer at all, makes it wait until
// ctx ends. nil: the process answered. A plugin's own code has no part
// in the answer, so a method stuck in a deadlock does not fail it.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.health.Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName})
	return err
}

// Done is closed when the plugin process has exited.
func (c *Client) Done() <-chan struct{} { return c.done }

// Source yields the live client of one plugin for an adapter.
type Source interface {
	// Current returns the live client and its generation (which changes at
	// every restart of the plugin process), or an error saying why the
	// plugin is unavailable (an *spi.Error). Never blocks.
	Current() (c *Client, gen uint64, err error)
	// Changed returns a channel closed at the next change of state
	// (the plugin went down, or came back).
	Changed() <-chan struct{}
}

// RestartPending is implemented by the cause of the error a Source's
// Current returns while the plugin is down (errors.As finds it): true
// while its host is starting or restarting it, so that a process is to
// come (Changed says when); false once the host gave up on it (its
// restarts off, or the host closed). An error without it counts as given
// up. A filter's call that finds its plugin down waits for the restart
// only while this is true (FilterOptions).
type RestartPending interface {
	RestartPending() bool
}

// restartPending reports whether err, a Source's Current error, says a
// process is to come (RestartPending).
func restartPending(err error) bool {
	var rp RestartPending
	return errors.As(err, &rp) && rp.RestartPending()
}

// DescribedSource is a Source that also knows how the running process
// described its point when it started (its Describe), which an adapter
// reads for what the process's sdk speaks and declares rather than what
// the first process said: a restart or a handover may run another build
// of the binary, older or newer (a filter's Chain and Activation, a
// balancer's or filter's WithoutArgs, the URL keys each point declares).
type DescribedSource interface {
	Source
	// Described is Current with the Description the process of
	// generation gen gave at its start. While the plugin is down (err
	// non-nil) d is the last process's, the best guess of what the next
	// one declares; d is nil when no process has described itself (the
	// adapter then keeps its options' values). Never blocks.
	Described() (c *Client, gen uint64, d *Description, err error)
}

// described is src's Current with its Description when src is a
// DescribedSource (d nil otherwise, or when it has none).
func described(src Source) (c *Client, gen uint64, d *Description, err error) {
	if ds, ok := src.(DescribedSource); ok {
		return ds.Described()
	}
	c, gen, err = src.Current()
	return c, gen, nil, err
}

// StaticSource is a Source that always returns one client, generation 1:
// for in-process harnesses with no supervision.
func StaticSource(c *Client) Source { return staticSource{c} }

type staticSource struct{ c *Client }

func (s staticSource) Current() (*Client, uint64, error) { return s.c, 1, nil }
func (s staticSource) Changed() <-chan struct{}          { return nil }
