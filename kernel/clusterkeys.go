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
	readers := map[string][]string{}
	elsewhere := map[string]bool{}
	for _, p := range n.cat.Describe() {
		for _, e := range p.Extensions {
			for _, k := range e.Keys {
				if p.Name == extension.PointCluster {
					readers[k.Key] = append(readers[k.Key], e.Name)
				} else {
					elsewhere[k.Key] = true
				}
			}
		}
	}
	if len(readers) == 0 {
		return nil
	}
	methods := u.Methods()
	var out [][3]string
	for _, k := range u.Keys() {
		key := baseKey(k, methods)
		names := readers[key]
		if len(names) == 0 || elsewhere[key] {
			continue
		}
		scopes := []string{""}
		if key != k {
			scopes[0] = strings.TrimSuffix(strings.TrimPrefix(k, spi.KeyMethods+"."), "."+key)
		} else {
			scopes = append(scopes, u.MethodsSetting(n.cat.Cluster.Key())...)
		}
		used := n.cat.Cluster.Choose(u, scopes[0]).Name
		if !slices.ContainsFunc(scopes, func(m string) bool { return slices.Contains(names, n.cat.Cluster.Choose(u, m).Name) }) {
			out = append(out, [3]string{k, used, strings.Join(names, ",")})
		}
	}
	return out
}

// warnClusterKeysUnread logs one warning per key of reference URL u that
// its cluster does not read (clusterKeysUnread), naming the service, the
// key, the cluster and the clusters that would read it. Refer calls it.
func (n *Node) warnClusterKeysUnread(u spi.URL, service string) {
	for _, t := range n.clusterKeysUnread(u) {
		n.logger.Warn("kernel: URL key is read by another cluster, not the one this reference uses (ignored)",
			"service", service, "key", t[0], "cluster", t[1], "read_by", t[2])
	}
}
