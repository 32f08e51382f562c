package kernel

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/airnode/airnode/spi"
)

// KeyApplication is the URL key of the application name (Dubbo's
// "application", <dubbo:application name>): Dubbo Admin groups and shows
// providers and consumers by it, and Dubbo refuses to start without one.
// The kernel reads nothing from it; every registry entry carries one
// (registryEntry): the URL's own, else DefaultApplication().
const KeyApplication = "application"

// application is DefaultApplication's value, computed once.
var application = defaultApplication(os.Executable, os.Args)

// DefaultApplication returns the application name a registry entry
// carries when its URL gives none: the base name of this process's
// executable without a ".exe" suffix ("airnode" for the airnode binary,
// "shop" for a program built as shop), the name an operator sees in ps
// and top; "airnode" when the executable's name is unknown. Dubbo itself
// has no default (an application name is required); a URL's
// "application" key, or the configuration's application setting
// (AIRNODE_APPLICATION), overrides it.
func DefaultApplication() string { return application }

// withApplication returns u with KeyApplication set to
// DefaultApplication() when u has none: the form of a registry entry
// (registryEntry) and of a reference's subscription, so that a registry
// sees one application for a consumer, in its entry and in what it
// watches for it (the zookeeper registry's warning of Dubbo Admin's
// application-level rules, app.configurators).
func withApplication(u spi.URL) spi.URL {
	if _, ok := u.Param(KeyApplication); ok {
		return u
	}
	return u.WithParams(map[string]string{KeyApplication: application})
}

// defaultApplication is DefaultApplication's rule, with the sources of
// the executable's path given: exe (os.Executable), else args[0].
func defaultApplication(exe func() (string, error), args []string) string {
	p, err := exe()
	if err != nil || p == "" {
		p = ""
		if len(args) > 0 {
			p = args[0]
		}
	}
	name := strings.TrimSuffix(filepath.Base(p), ".exe")
	if name == "" || name == "." || name == string(filepath.Separator) {
		return "airnode"
	}
	return name
}
