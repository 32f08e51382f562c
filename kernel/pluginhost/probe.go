package pluginhost

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// Probe is one unsupervised run of a plugin binary, for `airnode plugin
// check`: the handshake, what the plugin provides, and adapters to run the
// conformance suites against it. Close stops the process.
type Probe struct {
	// Path is the binary's absolute path; PID its process.
	Path string
	PID  int
	// ProtocolVersion is the negotiated plugin protocol version.
	ProtocolVersion int
	// Provides describes every point the plugin serves, in
	// pluginrpc.Points order.
	Provides []pluginrpc.Description

	client *plugin.Client
	cmd    *exec.Cmd
	c      *pluginrpc.Client
}

// NewProbe starts spec's binary (spec.Point is ignored: every point is
// asked; an empty spec.Name is the binary's file name), checks its sha256 when given, performs the handshake and asks what
// it provides. It fails when the plugin cannot start or provides nothing.
// Of opts only WithLogger matters.
func NewProbe(ctx context.Context, spec config.Plugin, opts ...Option) (*Probe, error) {
	if spec.Name == "" {
		spec.Name = filepath.Base(spec.Command)
	}
	spec.Point = PointService // any servable point: the connection is shared
	h := New(nil, opts...)
	p := newProc(h, spec)
	p.probe = true
	p.log = h.log.With("plugin", spec.Name) // every point is asked: none is named
	if err := p.launch(ctx); err != nil {
		return nil, err
	}
	pr := &Probe{Path: p.path, PID: p.pid, ProtocolVersion: p.version, client: p.client, cmd: p.cmd}
	pr.c, _, _ = p.Current()
	for _, point := range pluginrpc.Points {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		d, err := pluginrpc.Describe(dctx, pr.c, point)
		cancel()
		if err == nil {
			pr.Provides = append(pr.Provides, d)
		} else if !strings.Contains(err.Error(), "does not provide") {
			stopProcess(pr.client, pr.cmd, 0) // broken: no graceful shutdown to wait for
			return nil, fmt.Errorf("pluginhost: plugin %q (%s): %w", spec.Name, p.path, err)
		}
	}
	if len(pr.Provides) == 0 {
		pr.Close()
		return nil, fmt.Errorf("pluginhost: plugin %q (%s) provides no point (want one of %s)", spec.Name, p.path, strings.Join(pluginrpc.Points, ", "))
	}
	return pr, nil
}

func (pr *Probe) description(point string) (pluginrpc.Description, bool) {
	for _, d := range pr.Provides {
		if d.Point == point {
			return d, true
		}
	}
	return pluginrpc.Description{}, false
}

// LoadBalance returns the plugin's balancer builder, with no fallback (a
// failing Select, or one slower than the call's timeout, is reported
// through onFail), or nil when it serves none.
func (pr *Probe) LoadBalance(onFail func(error)) spi.LoadBalanceBuilder {
	d, ok := pr.description(pluginrpc.PointLoadBalance)
	if !ok {
		return nil
	}
	return pluginrpc.NewLoadBalanceBuilder(pluginrpc.LoadBalanceOptions{Name: d.Name, Source: pluginrpc.StaticSource(pr.c), OnFallback: onFail, Timeout: 10 * time.Second,
		OnBypass: func(b pluginrpc.Bypass) {
			if !b.Recovered {
				onFail(fmt.Errorf("plugin loadbalance %s gave no answer within %v", b.Point, b.Bound))
			}
		},
		WithoutArgs: d.WithoutArgs})
}

// Registry returns the plugin's registry builder, or nil.
func (pr *Probe) Registry() spi.RegistryBuilder {
	d, ok := pr.description(pluginrpc.PointRegistry)
	if !ok {
		return nil
	}
	return pluginrpc.NewRegistryBuilder(pluginrpc.RegistryOptions{Name: d.Name, Source: pluginrpc.StaticSource(pr.c)})
}

// Filter returns the plugin's filter builder, or nil.
func (pr *Probe) Filter() spi.FilterBuilder {
	d, ok := pr.description(pluginrpc.PointFilter)
	if !ok {
		return nil
	}
	return pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: d.Name, Activation: d.Activation, Source: pluginrpc.StaticSource(pr.c), WithoutArgs: d.WithoutArgs})
}

// Close stops the plugin process (gracefully, then by force, with its
// process group) and waits.
func (pr *Probe) Close() { stopProcess(pr.client, pr.cmd, killGrace) }
