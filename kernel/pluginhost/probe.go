package pluginhost

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
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

// CheckPoints checks, for each plugin that Start did not launch
// (StateNotStarted: a service plugin under a consumer command), that its
// binary provides the point plugins.yaml declares it under: one
// unsupervised run with Start's handshake and Describe, then the process
// is stopped. A plugin whose binary does not provide its point becomes
// StateFailed with the reason and ProvidedPoints Start gives such a
// plugin, so that `airnode list` catches a balancer declared as point:
// service as it catches one declared as point: registry. One that does
// provide it becomes StateChecked, with the protocol version and the
// names (a service plugin's services) its handshake and Describe gave.
// One that could not be asked (its binary is missing, it gave no
// handshake) stays StateNotStarted, its reason saying why: the command
// runs none of them, so their start failures are not its failures. Each run
// is bounded by the plugin's start_timeout and by ctx; CheckPoints
// returns when every run has ended, with why each plugin that could not
// be asked could not be, by plugin name (nil when every one was asked).
func (h *Host) CheckPoints(ctx context.Context) map[string]error {
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		unchecked map[string]error
	)
	var checked []*proc
	for _, p := range h.procs {
		p.mu.Lock()
		if p.state == StateNotStarted {
			checked = append(checked, p)
		}
		p.mu.Unlock()
	}
	h.warnLogLevel(checked)
	for _, p := range checked {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.checkPoint(ctx); err != nil {
				mu.Lock()
				defer mu.Unlock()
				if unchecked == nil {
					unchecked = map[string]error{}
				}
				unchecked[p.spec.Name] = err
			}
		}()
	}
	wg.Wait()
	return unchecked
}

// checkPoint is CheckPoints for one plugin: it returns why the plugin
// could not be asked, nil when it was.
func (p *proc) checkPoint(ctx context.Context) error {
	run := newProc(New(nil, WithLogger(p.h.base)), p.spec)
	run.probe, run.check = true, true
	err := run.launch(ctx)
	if err == nil {
		stopProcess(run.client, run.cmd, killGrace)
		run.mu.Lock()
		version, desc := run.version, run.desc
		run.mu.Unlock()
		p.mu.Lock()
		defer p.mu.Unlock()
		p.version, p.desc = version, desc
		p.setStateLocked(StateChecked, "", nil)
		return nil
	}
	run.mu.Lock()
	points := run.points
	run.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if points != nil {
		p.points, p.startErr = points, err
		p.setStateLocked(StateFailed, err.Error(), nil)
		return nil
	}
	p.setStateLocked(StateNotStarted, "its point could not be checked: "+
		strings.TrimPrefix(err.Error(), fmt.Sprintf("pluginhost: plugin %q (%s): ", p.spec.Name, p.path)), nil)
	return err
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
			if !b.Recovered && b.Err == nil { // errors were told to onFail one by one
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
	return pluginrpc.NewFilterBuilder(pluginrpc.FilterOptions{Name: d.Name, Activation: d.Activation, Source: pluginrpc.StaticSource(pr.c), WithoutArgs: d.WithoutArgs,
		Chain: d.Chain})
}

// Close stops the plugin process (gracefully, then by force, with its
// process group) and waits.
func (pr *Probe) Close() { stopProcess(pr.client, pr.cmd, killGrace) }
