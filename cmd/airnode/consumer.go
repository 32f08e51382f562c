package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
)

// consumerEnv is what a one-shot consumer command (call, bench) needs
// before it refers to a service.
type consumerEnv struct {
	cat    *extension.Catalogs
	cfg    config.Config
	logger *slog.Logger    // warnings and errors only, unless --log-level was given
	ctx    context.Context // cancelled by SIGINT or SIGTERM
}

// consumerSetup loads the catalogs and the configuration (whose registry
// fills an empty *registry), starts the configuration's plugins into the
// catalogs, and returns the environment with a function that stops the
// plugins and the signal watch; it must be called when the command ends.
func (a *app) consumerSetup(cmd *cobra.Command, registry *string) (consumerEnv, func(), error) {
	cat, err := a.Catalogs()
	if err != nil {
		return consumerEnv{}, nil, err
	}
	cfg, err := a.Config(nil)
	if err != nil {
		return consumerEnv{}, nil, err
	}
	if *registry == "" {
		*registry = cfg.Registry
	}
	logger := a.Logger()
	if !cmd.Flags().Changed("log-level") {
		logger, _ = newLogger(a.stderr, "warn", a.logFormat)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	plugins, err := startPlugins(ctx, cfg, a.configFile, cat, logger)
	if err != nil {
		stop()
		return consumerEnv{}, nil, err
	}
	done := func() {
		plugins.Close()
		stop()
	}
	return consumerEnv{cat: cat, cfg: cfg, logger: logger, ctx: ctx}, done, nil
}
