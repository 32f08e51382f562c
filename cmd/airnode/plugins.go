package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

// launchPlugins launches cfg's plugins and adds their extensions to cat.
// Any declared plugin that fails to start (missing binary, no handshake,
// wrong or unsupported point, a name shadowing a registered extension) is
// an error naming it, after the plugins already started have been stopped:
// a node does not run without a plugin its configuration declares. On
// success the returned host is never nil and must be closed.
//
// With the catalogs complete, it then checks the configuration's
// references against them (checkReferences: a misspelled loadbalance gets
// a did-you-mean, naming file and the reference), so every command that
// launches the plugins rejects a bad reference the same way. file is the
// configuration file cfg was read from ("" none).
func launchPlugins(ctx context.Context, cfg config.Config, file string, cat *extension.Catalogs, logger *slog.Logger) (*pluginhost.Host, error) {
	host := pluginhost.New(cfg.Plugins, pluginhost.WithLogger(logger))
	var err error
	if len(cfg.Plugins) > 0 {
		err = host.Start(ctx)
		if err == nil {
			err = host.Register(cat)
		}
	}
	if err == nil {
		err = checkReferences(cfg, file, cat)
	}
	if err != nil {
		_ = host.Close()
		return nil, err
	}
	return host, nil
}

// checkReferences checks every reference of cfg against cat as
// config.CheckReferences does — each extension its params name must exist
// and build with them — and names the configuration file and the
// reference in config.Load's form:
//
//	config: plugins.yaml: key "references[0].params": unknown loadbalance "rundrobin" (...); did you mean "roundrobin"?
//
// (config.CheckReferences does not know the file; kernel/config cannot be
// edited from here.) Without a file it is config.CheckReferences.
func checkReferences(cfg config.Config, file string, cat *extension.Catalogs) error {
	if file == "" {
		return cfg.CheckReferences(cat)
	}
	var errs []error
	for i, r := range cfg.References {
		u, err := spi.NewURL("airnode", "", 0, r.Interface, r.Params)
		if err == nil {
			_, err = cat.Explain(u, extension.ReferencedMethods(u))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("config: %s: key %q: %w", file, fmt.Sprintf("references[%d].params", i), err))
		}
	}
	return errors.Join(errs...)
}

// configKeyError returns err naming the configuration file and the key
// that set the refused URL key, in config.Load's form
//
//	config: plugins.yaml: key "protocol": invalid value "dirct" for URL key "dispatcher": want one of adaptive, all, direct (did you mean "direct"?)
//
// when file set it: through services[svc].params (svc is the service's
// index in cfg.Services, -1 when the file does not list it) or protocol,
// and not overridden by flagParams (-p and the dedicated flags, which
// win). Otherwise, or when err names no key, err is returned unchanged.
// The refused key is a *spi.ParamError's key, or the point of an
// *extension.UnknownError (an unknown transport: key "transport", also
// as a method-level key "methods.M.transport").
func configKeyError(cfg config.Config, file string, svc int, flagParams map[string]string, err error) error {
	if file == "" || err == nil {
		return err
	}
	var key string
	var cause error
	var pe *spi.ParamError
	var ue *extension.UnknownError
	switch {
	case errors.As(err, &pe):
		key, cause = pe.Key, pe
	case errors.As(err, &ue):
		key, cause = ue.Point, ue
	default:
		return err
	}
	if _, ok := flagParams[key]; ok {
		return err
	}
	sets := func(params map[string]string) bool {
		for k := range params {
			if k == key || ue != nil && strings.HasSuffix(k, "."+key) {
				return true
			}
		}
		return false
	}
	var path string
	switch {
	case svc >= 0 && sets(cfg.Services[svc].Params):
		path = fmt.Sprintf("services[%d].params", svc)
	case sets(cfg.Protocol):
		path = "protocol"
	default:
		return err
	}
	return fmt.Errorf("config: %s: key %q: %w", file, path, cause)
}
