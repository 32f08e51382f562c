// Package extensiontest provides stand-in extensions for tests of code that
// selects extensions (catalogs, `airnode list --explain`) without depending
// on the real ones in extensions/. The stand-ins do nothing when used; their
// Build validates the duration keys they are given, so tests can see Build
// errors surface.
package extensiontest

import (
	"context"
	"errors"
	"io"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// Ext is a stand-in extension of any URL-built point. Build fails with the
// URL's *spi.ParamError if a key in Durations is malformed, and with Err if
// set.
type Ext struct {
	ExtName   string
	Durations []string
	Err       error
	Act       spi.Activation // for filters
}

// Name returns ExtName.
func (e *Ext) Name() string { return e.ExtName }

func (e *Ext) check(u spi.URL) error {
	if e.Err != nil {
		return e.Err
	}
	var errs []error
	for _, k := range e.Durations {
		if _, err := u.Duration(k, 0); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Activation returns Act.
func (e *Ext) Activation() spi.Activation { return e.Act }

// LoadBalance is a stand-in balancer builder.
type LoadBalance struct{ Ext }

// Build validates u.
func (b *LoadBalance) Build(u spi.URL) (spi.LoadBalance, error) { return nop{}, b.check(u) }

// Cluster is a stand-in cluster builder.
type Cluster struct{ Ext }

// Build validates u.
func (b *Cluster) Build(u spi.URL) (spi.Cluster, error) { return nop{}, b.check(u) }

// Transport is a stand-in transport builder.
type Transport struct{ Ext }

// Build validates u.
func (b *Transport) Build(u spi.URL) (spi.Transport, error) { return nop{}, b.check(u) }

// Heartbeat is a stand-in heartbeat builder.
type Heartbeat struct{ Ext }

// Build validates u.
func (b *Heartbeat) Build(u spi.URL) (spi.Heartbeat, error) { return nop{}, b.check(u) }

// Registry is a stand-in registry builder.
type Registry struct{ Ext }

// Build validates u.
func (b *Registry) Build(u spi.URL) (spi.Registry, error) { return nil, b.check(u) }

// Filter is a stand-in filter builder.
type Filter struct{ Ext }

// Build validates u.
func (b *Filter) Build(u spi.URL) (spi.Filter, error) { return passFilter{}, b.check(u) }

// passFilter calls the next invoker.
type passFilter struct{}

func (passFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	return next.Invoke(ctx, inv)
}

// Codec is a stand-in codec with wire id CodecID.
type Codec struct {
	ExtName string
	CodecID uint8
}

// Name returns ExtName.
func (c *Codec) Name() string { return c.ExtName }

// ID returns CodecID.
func (c *Codec) ID() uint8 { return c.CodecID }

// NewEncoder returns an encoder that fails.
func (c *Codec) NewEncoder(io.Writer) spi.Encoder { return nop{} }

// NewDecoder returns a decoder that fails.
func (c *Codec) NewDecoder(io.Reader) spi.Decoder { return nop{} }

type nop struct{}

var errNop = errors.New("extensiontest: stand-in extension")

func (nop) Select(invokers []spi.Invoker, _ *spi.Invocation) spi.Invoker { return invokers[0] }
func (nop) Invoke(context.Context, *spi.Invocation, spi.Directory, spi.LoadBalance) spi.Result {
	return spi.Result{Err: errNop}
}
func (nop) Listen(string) (spi.Listener, error)               { return nil, errNop }
func (nop) Dial(context.Context, string) (spi.Session, error) { return nil, errNop }
func (nop) Watch(spi.Channel) func()                          { return func() {} }
func (nop) Encode(any) error                                  { return errNop }
func (nop) Decode(any) error                                  { return errNop }

// Catalogs returns catalogs filled with stand-ins under the names of the
// bundled extensions, each with origin extension.Bundled:
//
//	transport   smux tcp
//	registry    file zookeeper direct memory
//	loadbalance random roundrobin leastactive consistenthash shortestresponse
//	codec       msgpack json protobuf
//	heartbeat   idle dual none     (Build validates heartbeat.interval, heartbeat.timeout)
//	cluster     failover failfast failsafe forking
//	filter      metrics (consumer+provider, order -100), accesslog (provider, key "accesslog"),
//	            token (provider, key "token", order -50), activelimit (consumer, key "actives",
//	            per method), executelimit (provider, key "executes", per method)
//
// Build of the loadbalance stand-ins validates "warmup"; transports
// validate "connect.timeout".
func Catalogs() *extension.Catalogs {
	c := extension.New()
	b := extension.Bundled
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	for _, n := range []string{"smux", "tcp"} {
		must(c.Transport.Register(&Transport{Ext{ExtName: n, Durations: []string{"connect.timeout"}}}, b))
	}
	for _, n := range []string{"file", "zookeeper", "direct", "memory"} {
		must(c.Registry.Register(&Registry{Ext{ExtName: n}}, b))
	}
	for _, n := range []string{"random", "roundrobin", "leastactive", "consistenthash", "shortestresponse"} {
		must(c.LoadBalance.Register(&LoadBalance{Ext{ExtName: n, Durations: []string{"warmup"}}}, b))
	}
	for i, n := range []string{"msgpack", "json", "protobuf"} {
		must(c.Codec.Register(&Codec{ExtName: n, CodecID: uint8(i + 1)}, b))
	}
	for _, n := range []string{"idle", "dual", "none"} {
		must(c.Heartbeat.Register(&Heartbeat{Ext{ExtName: n, Durations: []string{"heartbeat.interval", "heartbeat.timeout"}}}, b))
	}
	for _, n := range []string{"failover", "failfast", "failsafe", "forking"} {
		must(c.Cluster.Register(&Cluster{Ext{ExtName: n}}, b))
	}
	both := []spi.Side{spi.Consumer, spi.Provider}
	for _, f := range []*Filter{
		{Ext{ExtName: "metrics", Act: spi.Activation{Sides: both, Order: -100}}},
		{Ext{ExtName: "accesslog", Act: spi.Activation{Sides: []spi.Side{spi.Provider}, Key: "accesslog"}}},
		{Ext{ExtName: "token", Act: spi.Activation{Sides: []spi.Side{spi.Provider}, Key: "token", Order: -50}}},
		{Ext{ExtName: "activelimit", Act: spi.Activation{Sides: []spi.Side{spi.Consumer}, Key: "actives", PerMethod: true}}},
		{Ext{ExtName: "executelimit", Act: spi.Activation{Sides: []spi.Side{spi.Provider}, Key: "executes", PerMethod: true}}},
	} {
		must(c.Filter.Register(f, b))
	}
	return c
}
