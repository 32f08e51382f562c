package pluginhost

import (
	"fmt"

	"github.com/airnode/airnode/spi"
)

// unstarted stands in the catalog for a plugin that never ran (its first
// start failed, or StartPoints did not start it): building it fails with
// the reason, so that a URL selecting it fails saying why the plugin is
// missing rather than calling it unknown. It declares no keys and is
// activated on no side. One type per point, since Build's result differs.
type unstarted struct{ p *proc }

func (u unstarted) Name() string { return u.p.spec.Name }

// err is the start's error, or says the plugin was not started.
func (u unstarted) err() error {
	u.p.mu.Lock()
	defer u.p.mu.Unlock()
	if u.p.startErr != nil {
		return u.p.startErr
	}
	return fmt.Errorf("pluginhost: %s plugin %q (%s) is not running: this host did not start it (%s)", u.p.spec.Point, u.p.spec.Name, u.p.path, u.p.state)
}

type unstartedLoadBalance struct{ unstarted }

func (u unstartedLoadBalance) Build(spi.URL) (spi.LoadBalance, error) { return nil, u.err() }

type unstartedRegistry struct{ unstarted }

func (u unstartedRegistry) Build(spi.URL) (spi.Registry, error) { return nil, u.err() }

type unstartedFilter struct{ unstarted }

func (u unstartedFilter) Activation() spi.Activation { return spi.Activation{} }

func (u unstartedFilter) Build(spi.URL) (spi.Filter, error) { return nil, u.err() }

var (
	_ spi.LoadBalanceBuilder = unstartedLoadBalance{}
	_ spi.RegistryBuilder    = unstartedRegistry{}
	_ spi.FilterBuilder      = unstartedFilter{}
)
