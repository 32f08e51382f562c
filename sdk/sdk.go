package sdk

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// Plugins is what one plugin binary serves: set the field of each point it
// provides. The host's plugins.yaml entry names which point it uses and
// the name the extension is catalogued under: URLs select it by that
// declared name (loadbalance=acme.p2c), whatever the builder's Name()
// answers. The two may differ (a binary whose builder is "p2c" declared
// as acme.p2c next to the bundled p2c); the host then logs both names
// when the plugin first runs and `airnode list` shows the builder's name
// in its NAME IN BINARY column. The URL keys the builder declares
// (spi.KeyDescriber) keep their own names either way.
type Plugins struct {
	LoadBalance spi.LoadBalanceBuilder
	Registry    spi.RegistryBuilder
	Filter      spi.FilterBuilder
	// Services are provider implementations the host exports.
	Services []Service
}

// ProtocolVersion is the plugin protocol version this SDK speaks.
const ProtocolVersion = pluginrpc.ProtocolVersion

// ParentPoll is how often a plugin process checks that its host is alive.
const ParentPoll = 200 * time.Millisecond

// TermGrace is how long a plugin started by a host keeps serving after a
// SIGTERM: the host stops its plugins itself when it shuts down, so a
// SIGTERM sent to every process of the service (systemd's control group,
// kill -TERM -PGID) must not kill a plugin the host is still using while
// it drains. On the SIGTERM the plugin asks the host for a handover
// (pluginrpc.HandoverKey): an airnode host that is not closing starts a
// new process of the binary, moves the calls to it and closes this one
// once its calls in flight are done (an upgrade in place: replace the
// binary, SIGTERM the plugin). A plugin the host neither closes nor
// outlives within TermGrace exits anyway (status 0), and the host
// restarts it under restart: on-failure or always.
const TermGrace = 30 * time.Second

// EnvLogLevel names the environment variable that sets the plugin's log
// level (trace, debug, info, warn, error; default info). Set it in the
// host's environment or in the plugin's env in plugins.yaml; without
// either, a host run with --log-level debug sets it to debug. The host
// logs the plugin's records only at or above its own --log-level.
const EnvLogLevel = pluginrpc.EnvLogLevel

var logger = newLogger()

func newLogger() hclog.Logger {
	level := hclog.LevelFromString(os.Getenv(EnvLogLevel))
	if level == hclog.NoLevel {
		level = hclog.Info
	}
	return hclog.New(&hclog.LoggerOptions{
		Name:       filepath.Base(os.Args[0]),
		Output:     os.Stderr,
		Level:      level,
		JSONFormat: true, // the host parses it and logs it as its own
	})
}

// Logger returns the plugin's logger: hclog to stderr, collected by the
// host. Never write to stdout: it carries the handshake.
func Logger() hclog.Logger { return logger }

// Serve serves p to the host that started this process and returns when
// the host closes the plugin. It exits the process with status 1 when p is
// empty or invalid, and with status 3 when the host process dies. Under a
// host, SIGINT is ignored (go-plugin's rule), so is SIGHUP (a closing ssh
// session or a logrotate `kill -HUP` sent to the process group: the host
// keeps serving, and a plugin never outlives its host, ParentPoll), and
// SIGTERM asks the host for a handover to a new process and starts the
// TermGrace countdown (exit status 0), since the host closes its plugins
// after its own shutdown.
func Serve(p Plugins) {
	impl, err := p.impl()
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // p.impl's errors begin with "sdk: "
		os.Exit(1)
	}
	hclog.SetDefault(logger) // pluginrpc logs the stacks of recovered panics there
	if os.Getenv(pluginrpc.Handshake.MagicCookieKey) == pluginrpc.Handshake.MagicCookieValue {
		go watchParent(os.Getppid(), ParentPoll, func() {
			logger.Warn("host process is gone; exiting")
			os.Exit(3)
		})
		go onTerm(TermGrace, func() { os.Exit(0) })
		signal.Ignore(syscall.SIGHUP)
	}
	// go-plugin points os.Stderr at a pipe that its stdio stream copies to
	// the host, a copy that dies with the process: a line printed just
	// before os.Exit (log.Fatal) was lost. The first call from the host,
	// which comes after that redirection, points it back at the process's
	// stderr, which the host reads to the end and logs line by line.
	stderr := os.Stderr
	var restore sync.Once
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  pluginrpc.Handshake,
		VersionedPlugins: pluginrpc.ServerPlugins(impl),
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, grpc.MaxRecvMsgSize(pluginrpc.MaxMessage), grpc.MaxSendMsgSize(pluginrpc.MaxMessage),
				grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
					restore.Do(func() { os.Stderr = stderr })
					return h(ctx, req)
				}))
			return grpc.NewServer(opts...)
		},
		Logger: logger,
	})
}

// impl checks p and converts it for pluginrpc.
func (p Plugins) impl() (pluginrpc.Impl, error) {
	impl := pluginrpc.Impl{LoadBalance: p.LoadBalance, Registry: p.Registry, Filter: p.Filter}
	if len(p.Services) > 0 {
		h, err := newServiceHandler(p.Services)
		if err != nil {
			return impl, err
		}
		impl.Service = h
	}
	if impl.LoadBalance == nil && impl.Registry == nil && impl.Filter == nil && impl.Service == nil {
		return impl, fmt.Errorf("sdk: Plugins has nothing to serve (set LoadBalance, Registry, Filter or Services)")
	}
	return impl, nil
}

// Impl converts p for the in-process harness (sdk/sdktest).
func (p Plugins) Impl() (pluginrpc.Impl, error) { return p.impl() }

// onTerm waits for SIGTERM, then calls exit after grace unless the process
// ended before.
func onTerm(grace time.Duration, exit func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM)
	<-ch
	logger.Info("SIGTERM: asking the host to hand the calls over to a new process; serving until the host closes this one",
		"grace", grace.String(), pluginrpc.HandoverKey, "sigterm")
	time.Sleep(grace)
	exit()
}

// watchParent calls gone once when the process's parent is no longer ppid
// (the host died and the process was re-parented), polling every interval.
// This is the rule that plugins never outlive their host, kill -9 included:
// go-plugin itself only stops a plugin when the host asks.
func watchParent(ppid int, interval time.Duration, gone func()) {
	if ppid <= 1 {
		return // started by init: no host to watch
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for range t.C {
		if os.Getppid() != ppid {
			gone()
			return
		}
	}
}
