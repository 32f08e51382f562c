// Package bundle is the one explicit list of airnode's bundled extensions
// (DESIGN §2, STYLE 4). cmd/airnode and library users call Register on
// catalogs they built with extension.New; nothing registers itself in init.
package bundle

import (
	"errors"

	"github.com/airnode/airnode/kernel/extension"
)

// Register adds every bundled extension to c, each with origin
// extension.Bundled. It fails if any name is already taken.
func Register(c *extension.Catalogs) error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	b := extension.Bundled

	// transports
	_ = b
	// codecs
	// registries
	// load balancers
	// clusters
	// heartbeats
	// filters
	_ = add
	return errors.Join(errs...)
}

// Catalogs returns new catalogs holding every bundled extension.
func Catalogs() *extension.Catalogs {
	c := extension.New()
	if err := Register(c); err != nil {
		panic("bundle: " + err.Error()) // a bug in this list, caught by its test
	}
	return c
}
