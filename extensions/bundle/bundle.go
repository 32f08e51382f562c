// Package bundle is the one explicit list of airnode's bundled extensions.
// cmd/airnode and library users call Register on
// catalogs they built with extension.New; nothing registers itself in init.
package bundle

import (
	"errors"

	"github.com/airnode/airnode/extensions/cluster/failfast"
	"github.com/airnode/airnode/extensions/cluster/failover"
	"github.com/airnode/airnode/extensions/cluster/failsafe"
	"github.com/airnode/airnode/extensions/cluster/forking"
	"github.com/airnode/airnode/extensions/codec/json"
	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/extensions/codec/protobuf"
	"github.com/airnode/airnode/extensions/filter/accesslog"
	"github.com/airnode/airnode/extensions/filter/activelimit"
	"github.com/airnode/airnode/extensions/filter/executelimit"
	"github.com/airnode/airnode/extensions/filter/metrics"
	"github.com/airnode/airnode/extensions/filter/threadlimit"
	"github.com/airnode/airnode/extensions/filter/token"
	"github.com/airnode/airnode/extensions/heartbeat/dual"
	"github.com/airnode/airnode/extensions/heartbeat/idle"
	"github.com/airnode/airnode/extensions/heartbeat/none"
	"github.com/airnode/airnode/extensions/lb/consistenthash"
	"github.com/airnode/airnode/extensions/lb/leastactive"
	"github.com/airnode/airnode/extensions/lb/p2c"
	"github.com/airnode/airnode/extensions/lb/random"
	"github.com/airnode/airnode/extensions/lb/roundrobin"
	"github.com/airnode/airnode/extensions/lb/shortestresponse"
	"github.com/airnode/airnode/extensions/registry/direct"
	"github.com/airnode/airnode/extensions/registry/file"
	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/extensions/registry/zookeeper"
	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/kernel/extension"
)

// Register adds every bundled extension to c, each with origin
// extension.Bundled. It fails if any name is already taken.
func Register(c *extension.Catalogs) error {
	b := extension.Bundled
	return errors.Join(
		// transports
		c.Transport.Register(smux.Builder{}, b),
		c.Transport.Register(tcp.Builder{}, b),
		// codecs
		c.Codec.Register(msgpack.Codec{}, b),
		c.Codec.Register(json.Codec{}, b),
		c.Codec.Register(protobuf.Codec{}, b),
		// registries
		c.Registry.Register(file.Builder{}, b),
		c.Registry.Register(direct.Builder{}, b),
		c.Registry.Register(memory.NewBuilder(), b),
		c.Registry.Register(zookeeper.Builder{}, b),
		// load balancers
		c.LoadBalance.Register(random.New(), b),
		c.LoadBalance.Register(roundrobin.New(), b),
		c.LoadBalance.Register(leastactive.New(), b),
		c.LoadBalance.Register(shortestresponse.New(), b),
		c.LoadBalance.Register(consistenthash.New(), b),
		c.LoadBalance.Register(p2c.New(), b),
		// clusters
		c.Cluster.Register(failover.Builder{}, b),
		c.Cluster.Register(failfast.Builder{}, b),
		c.Cluster.Register(failsafe.New(), b),
		c.Cluster.Register(forking.Builder{}, b),
		// heartbeats
		c.Heartbeat.Register(idle.Builder{}, b),
		c.Heartbeat.Register(dual.Builder{}, b),
		c.Heartbeat.Register(none.Builder{}, b),
		// filters
		c.Filter.Register(metrics.NewBuilder(nil), b),
		c.Filter.Register(&accesslog.Builder{}, b),
		c.Filter.Register(token.Builder{}, b),
		c.Filter.Register(executelimit.Builder{}, b),
		c.Filter.Register(activelimit.Builder{}, b),
		c.Filter.Register(&threadlimit.Builder{}, b),
	)
}

// Catalogs returns new catalogs holding every bundled extension.
func Catalogs() *extension.Catalogs {
	c := extension.New()
	if err := Register(c); err != nil {
		panic("bundle: " + err.Error()) // a bug in this list, caught by its test
	}
	return c
}
