package cli

import (
	"fmt"

	"github.com/airnode/airnode/kernel/extension"
)

// Option adjusts the command line Main and Run build.
type Option func(*options)

type options struct {
	extensions []func(*extension.Catalogs) error // WithExtensions, in order given
}

// WithExtensions makes register add a program's in-process extensions to
// every catalogs the command line builds: those of serve, call, bench,
// list (and list --explain) and registry alike. register runs on
// fresh catalogs after the bundled extensions (extensions/bundle) and
// before the out-of-process plugins of plugins.yaml join them, so a
// plugin, or an in-process extension, whose name is already taken on its
// point is an error naming the name and the origin that has it.
//
// register adds each extension with the point's Register and an origin
// saying where it comes from, by convention its Go package path:
//
//	cli.WithExtensions(func(cat *extension.Catalogs) error {
//		return cat.LoadBalance.Register(first.Builder{}, extension.Origin("github.com/acme/lb/first"))
//	})
//
// It may be called many times per process (once per command, more in
// tests), must register the same extensions every time and must not keep
// cat. An error it returns fails the command with
// "extensions: <error>". WithExtensions may be given more than once; the
// functions run in the order given.
func WithExtensions(register func(*extension.Catalogs) error) Option {
	return func(o *options) { o.extensions = append(o.extensions, register) }
}

// catalogs returns fresh catalogs holding every bundled extension and
// then every extension o's WithExtensions functions register: the app's
// newCatalogs.
func (o options) catalogs() (*extension.Catalogs, error) {
	cat, err := bundledCatalogs()
	if err != nil {
		return nil, err
	}
	for _, register := range o.extensions {
		if register == nil {
			continue
		}
		if err := register(cat); err != nil {
			return nil, fmt.Errorf("extensions: %w", err)
		}
	}
	return cat, nil
}
