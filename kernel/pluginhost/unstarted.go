package pluginhost

import (
	"fmt"
	"strings"

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

// NotRunning says why the plugin never ran, without the plugin's name and
// path (its catalog row names them): "failed to start: exited with
// status 2 before the handshake; its last stderr line: ...", or "was not
// started by this command". `airnode list` shows it instead of an
// activation, which only the running plugin knows.
func (u unstarted) NotRunning() string {
	err := u.err()
	u.p.mu.Lock()
	failed := u.p.startErr != nil
	u.p.mu.Unlock()
	if !failed {
		return "was not started by this command"
	}
	return "failed to start: " + strings.TrimPrefix(err.Error(), fmt.Sprintf("pluginhost: plugin %q (%s): ", u.p.spec.Name, u.p.path))
}

// StartFailed reports whether the plugin's start failed (rather than
// this command not starting it): the URL keys it reads are then unknown
// to the node although a URL may carry them, so kernel.UnreadKeys does
// not call a key read by nothing on its account.
func (u unstarted) StartFailed() bool {
	u.p.mu.Lock()
	defer u.p.mu.Unlock()
	return u.p.startErr != nil
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
