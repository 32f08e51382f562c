package main

import (
	"context"
	"log/slog"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/pluginhost"
)

// launchPlugins launches cfg's plugins and adds their extensions to cat.
// Any declared plugin that fails to start (missing binary, no handshake,
// wrong or unsupported point, a name shadowing a registered extension) is
// an error naming it, after the plugins already started have been stopped:
// a node does not run without a plugin its configuration declares. On
// success the returned host is never nil and must be closed.
//
// With the catalogs complete, it then checks the configuration's
// references against them (config.CheckReferences: a misspelled
// loadbalance gets a did-you-mean), so every command that launches the
// plugins rejects a bad reference the same way.
func launchPlugins(ctx context.Context, cfg config.Config, cat *extension.Catalogs, logger *slog.Logger) (*pluginhost.Host, error) {
	host := pluginhost.New(cfg.Plugins, pluginhost.WithLogger(logger))
	var err error
	if len(cfg.Plugins) > 0 {
		err = host.Start(ctx)
		if err == nil {
			err = host.Register(cat)
		}
	}
	if err == nil {
		err = cfg.CheckReferences(cat)
	}
	if err != nil {
		_ = host.Close()
		return nil, err
	}
	return host, nil
}
