package extension

import (
	"fmt"

	"github.com/airnode/airnode/spi"
)

// Point names, URL keys and defaults.
const (
	PointTransport   = "transport"
	PointRegistry    = "registry"
	PointLoadBalance = "loadbalance"
	PointCodec       = "codec"
	PointHeartbeat   = "heartbeat"
	PointCluster     = "cluster"
	PointFilter      = "filter"
)

// Catalogs holds one catalog per extension point. The zero value is not
// usable; call New.
type Catalogs struct {
	Transport   *Point[spi.TransportBuilder]   // URL key "transport", default "smux"
	Registry    *Point[spi.RegistryBuilder]    // selected by registry URL scheme, default "file"
	LoadBalance *Point[spi.LoadBalanceBuilder] // URL key "loadbalance", default "random"
	Codec       *Point[spi.Codec]              // URL key "codec", default "msgpack"; also looked up by wire id (CodecByID)
	Heartbeat   *Point[spi.HeartbeatBuilder]   // URL key "heartbeat", default "idle"; a bare number: idle with that interval in ms
	Cluster     *Point[spi.ClusterBuilder]     // URL key "cluster", default "failover"
	Filter      *Point[spi.FilterBuilder]      // URL key "filter" edits the activated set (ActivateFilters); no default
}

// New returns empty catalogs with airnode's defaults: transport smux,
// registry file, loadbalance random, codec msgpack, heartbeat idle,
// cluster failover. Filters have no default; they are activated (see
// ActivateFilters). The registry is chosen by the registry URL's scheme;
// a bare number in "heartbeat" selects the default strategy with that
// interval in ms, and Dubbo's heartbeat=0 or a negative number, off in
// Dubbo, is refused with a hint naming heartbeat=none.
func New() *Catalogs {
	return &Catalogs{
		Transport:   NewPoint[spi.TransportBuilder](PointTransport, "transport", "smux"),
		Registry:    NewPoint[spi.RegistryBuilder](PointRegistry, "", "file"),
		LoadBalance: NewPoint[spi.LoadBalanceBuilder](PointLoadBalance, "loadbalance", "random"),
		Codec:       NewPoint[spi.Codec](PointCodec, "codec", "msgpack"),
		Heartbeat:   NewPoint[spi.HeartbeatBuilder](PointHeartbeat, "heartbeat", "idle", BareNumberSelectsDefault("heartbeat.interval"), NumberOffIs("none")),
		Cluster:     NewPoint[spi.ClusterBuilder](PointCluster, "cluster", "failover"),
		Filter:      NewPoint[spi.FilterBuilder](PointFilter, "filter", ""),
	}
}

// SetMissHint sets hint (Point.SetMissHint) on the points a plugin may
// serve, loadbalance, registry and filter: an unknown name there may be
// a plugin's that was not declared.
func (c *Catalogs) SetMissHint(hint string) {
	c.LoadBalance.SetMissHint(hint)
	c.Registry.SetMissHint(hint)
	c.Filter.SetMissHint(hint)
}

// CodecByID returns the codec with wire id id.
func (c *Catalogs) CodecByID(id uint8) (spi.Codec, error) {
	for _, n := range c.Codec.Names() {
		cd, _ := c.Codec.Get(n)
		if cd.ID() == id {
			return cd, nil
		}
	}
	return nil, fmt.Errorf("unknown codec id %d", id)
}
