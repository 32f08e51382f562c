package failfast

import (
	"context"

	"github.com/airnode/airnode/extensions/cluster/internal/clusterkit"
	"github.com/airnode/airnode/spi"
)

// Name is the extension name, the value of the URL key "cluster".
const Name = "failfast"

// Builder builds failfast clusters. The zero value is ready to use.
type Builder struct{}

// Name returns "failfast".
func (Builder) Name() string { return Name }

// Build returns the cluster; failfast has no keys, so it never fails.
func (Builder) Build(spi.URL) (spi.Cluster, error) { return Cluster{}, nil }

// Cluster is a failfast cluster.
type Cluster struct{}

// Invoke calls the provider lb picks once and returns its result.
func (Cluster) Invoke(ctx context.Context, inv *spi.Invocation, dir spi.Directory, lb spi.LoadBalance) spi.Result {
	list := dir.List(inv)
	if len(list) == 0 {
		return spi.Result{Err: clusterkit.NoProvider(inv, dir, "")}
	}
	x, err := clusterkit.Select(ctx, lb, dir, list, inv)
	if err != nil {
		return spi.Result{Err: err}
	}
	if x == nil {
		return spi.Result{Err: clusterkit.NoneSelected(inv, dir, lb, list)}
	}
	return x.Invoke(ctx, inv)
}

// Interface guards.
var (
	_ spi.ClusterBuilder = Builder{}
	_ spi.Cluster        = Cluster{}
)
