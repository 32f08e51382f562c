package kernel

import (
	"slices"
	"strings"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// clusterKeysUnread returns, for each key of reference URL u that some
// cluster extension of the node's catalogs declares (spi.KeyDescriber)
// while the cluster its scope uses does not, the triple [the key as
// written, the cluster used, the clusters that declare it]: Dubbo's
// retries=3 beside cluster=failfast, failsafe or forking does nothing,
// as forks=4 does beside failover. A method-level form ("Who.retries",
// "methods.Who.retries", as baseKey reads them) is checked against the
// method's cluster; a service-level key is reported only when neither
// the service's cluster nor any method's own (a method-level "cluster")
// declares it. A key an extension of another point declares too is left
// out: that one reads it.
func (n *Node) clusterKeysUnread(u spi.URL) [][3]string {
	return n.pointKeysUnread(u, extension.PointCluster, n.cat.Cluster.Key(), chooser(n.cat.Cluster))
}

// balancerKeysUnread is clusterKeysUnread for the load balancer:
// hash.nodes beside loadbalance=random (or no loadbalance), p2c.decay
// beside roundrobin. The provider keys the weighing balancers declare
// (weight, warmup, timestamp: providerOwnedKeys) are left out: they are
// read from each provider's URL, whatever the reference sets
// (ReferWarnings says so).
func (n *Node) balancerKeysUnread(u spi.URL) [][3]string {
	return n.pointKeysUnread(u, extension.PointLoadBalance, n.cat.LoadBalance.Key(), chooser(n.cat.LoadBalance), providerOwnedKeys...)
}

// chooser returns pointKeysUnread's choose for point p: the name of the
// extension u chooses for a method ("" for the service), or "" when p
// has no extension of that name (cluster=failovr): Refer refuses it, and
// which keys it would read is unknown, so none is warned of.
func chooser[T extension.Named](p *extension.Point[T]) func(spi.URL, string) string {
	return func(u spi.URL, m string) string {
		name := p.Choose(u, m).Name
		if _, ok := p.Origin(name); !ok {
			return ""
		}
		return name
	}
}

// pointKeysUnread returns, for each key of u that some extension of
// point declares while the extension its scope chooses (choose, by the
// point's URL key pointKey) does not, [the key as written, the extension
// used, the extensions that declare it]; keys in skip are left out, and
// so is a key of a scope whose extension is unknown (choose returns "").
func (n *Node) pointKeysUnread(u spi.URL, point, pointKey string, choose func(spi.URL, string) string, skip ...string) [][3]string {
	readers, elsewhere := n.pointKeyReaders(point)
	if len(readers) == 0 {
		return nil
	}
	methods := u.Methods()
	var out [][3]string
	for _, k := range u.Keys() {
		key := baseKey(k, methods)
		names := readers[key]
		if len(names) == 0 || elsewhere[key] || slices.Contains(skip, key) {
			continue
		}
		scopes := []string{""}
		if key != k {
			scopes[0] = strings.TrimSuffix(strings.TrimPrefix(k, spi.KeyMethods+"."), "."+key)
		} else {
			scopes = append(scopes, u.MethodsSetting(pointKey)...)
		}
		if slices.ContainsFunc(scopes, func(m string) bool { return choose(u, m) == "" }) {
			continue
		}
		used := choose(u, scopes[0])
		if !slices.ContainsFunc(scopes, func(m string) bool { return slices.Contains(names, choose(u, m)) }) {
			out = append(out, [3]string{k, used, strings.Join(names, ",")})
		}
	}
	return out
}

// pointKeyReaders returns, for each key an extension of point declares
// (spi.KeyDescriber), the extensions that declare it, and the keys an
// extension of another point declares.
func (n *Node) pointKeyReaders(point string) (readers map[string][]string, elsewhere map[string]bool) {
	readers, elsewhere = map[string][]string{}, map[string]bool{}
	for _, p := range n.cat.Describe() {
		for _, e := range p.Extensions {
			for _, k := range e.Keys {
				if p.Name == point {
					readers[k.Key] = append(readers[k.Key], e.Name)
				} else {
					elsewhere[k.Key] = true
				}
			}
		}
	}
	return readers, elsewhere
}

// heartbeatKeysUnread is clusterKeysUnread for the heartbeat strategy:
// heartbeat.retries or heartbeat.ping.timeout beside heartbeat=dual (only
// idle reads them), heartbeat.interval beside heartbeat=none. Dubbo's bare
// heartbeat=3000 chooses the default strategy.
func (n *Node) heartbeatKeysUnread(u spi.URL) [][3]string {
	return n.pointKeysUnread(u, extension.PointHeartbeat, n.cat.Heartbeat.Key(), chooser(n.cat.Heartbeat))
}

// HeartbeatKeysUnread returns the keys of u that the heartbeat strategy
// u chooses does not read while another strategy does (heartbeat.retries
// beside heartbeat=dual, heartbeat.interval beside heartbeat=none), as
// Refer and Export warn of them (ignored): each with its value and why
// ("heartbeat dual does not read it; idle does"). list --explain marks
// the same keys.
func (n *Node) HeartbeatKeysUnread(u spi.URL) []KeyNoEffect {
	var out []KeyNoEffect
	for _, t := range n.heartbeatKeysUnread(u) {
		v, _ := u.Param(t[0])
		out = append(out, KeyNoEffect{Key: t[0], Value: v, Why: unreadWhy("heartbeat", t)})
	}
	return out
}

// warnHeartbeatKeysUnread logs one warning per key of u that the heartbeat
// strategy it chooses does not read (heartbeatKeysUnread), naming the
// service, the key, the strategy and the strategies that would read it.
// Refer calls it with "reference", Export with "service".
func (n *Node) warnHeartbeatKeysUnread(u spi.URL, service, what string) {
	for _, t := range n.heartbeatKeysUnread(u) {
		n.logger.Warn("URL key is read by another heartbeat strategy, not the one this "+what+" uses (ignored)",
			"service", service, "key", t[0], "heartbeat", t[1], "read_by", t[2])
	}
}
