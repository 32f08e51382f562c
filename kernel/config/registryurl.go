package config

import (
	"fmt"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// RegistryURL returns the registry URL c means, for kernel.WithRegistry:
// c.Registry parsed, or, when it is "" ("the default registry"), the
// default registry of cat in its own default location (DefaultRegistryURL:
// "file://", the directory the file registry picks), as airnode serve,
// call and registry ls use it. Errors: a Registry that does not parse
// (`config: registry: url: ...`), or "" when cat has no default registry.
func (c Config) RegistryURL(cat *extension.Catalogs) (spi.URL, error) {
	if c.Registry != "" {
		u, err := spi.Parse(c.Registry)
		if err != nil {
			return spi.URL{}, fmt.Errorf("config: registry: %w", err)
		}
		return u, nil
	}
	u, ok := DefaultRegistryURL(cat)
	if !ok {
		return spi.URL{}, fmt.Errorf("config: registry is empty (the default registry) but the catalogs hold no default registry %q: set registry", cat.Registry.Default())
	}
	return u, nil
}

// DefaultRegistryURL returns the URL of cat's default registry extension
// with no location ("file://": the file registry then uses its default
// directory), and false when cat does not hold that extension.
func DefaultRegistryURL(cat *extension.Catalogs) (spi.URL, bool) {
	def := cat.Registry.Default()
	if _, ok := cat.Registry.Origin(def); !ok {
		return spi.URL{}, false
	}
	u, err := spi.Parse(def + "://")
	if err != nil {
		return spi.URL{}, false
	}
	return u, true
}
