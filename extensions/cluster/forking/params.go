package forking

import "github.com/airnode/airnode/spi"

// URL keys and defaults.
const (
	// KeyForks is the number of providers called in parallel.
	KeyForks     = "forks"
	DefaultForks = 2
	// MaxForks bounds forks.
	MaxForks = 100
)

// forks is the forks of one method (or the service) and whether the
// reference URL sets it (at service or method level); when it does not,
// the provider's forks applies (providerForks).
type forks struct {
	n   int
	own bool
}

// parseForks resolves forks for method ("" for the service level) from
// reference URL u.
func parseForks(u spi.URL, method string) (forks, error) {
	n, err := u.MethodIntIn(method, KeyForks, DefaultForks, 1, MaxForks, "")
	if err != nil {
		return forks{}, err
	}
	_, _, own := u.MethodParam(method, KeyForks)
	return forks{n: int(n), own: own}, nil
}

// providerForks is the forks a provider invoker's URL sets (the provider
// URL merged with the reference's, spi.MergeURL): the service's and each
// method's that sets its own.
type providerForks struct {
	def     int
	methods map[string]int // nil when no method sets forks
}

// parseProviderForks reads the forks of provider invoker URL u; a value
// that is malformed or out of bounds counts as absent (DefaultForks): the
// consumer cannot fix the provider's URL.
func parseProviderForks(u spi.URL) providerForks {
	pf := providerForks{def: lenientForks(u, "")}
	for _, m := range u.MethodsSetting(KeyForks) {
		if pf.methods == nil {
			pf.methods = make(map[string]int)
		}
		pf.methods[m] = lenientForks(u, m)
	}
	return pf
}

func lenientForks(u spi.URL, method string) int {
	n, err := u.MethodInt(method, KeyForks, DefaultForks)
	if err != nil || n < 1 || n > MaxForks {
		return DefaultForks
	}
	return int(n)
}

// of returns the provider's forks of method.
func (pf providerForks) of(method string) int {
	if n, ok := pf.methods[method]; ok {
		return n
	}
	return pf.def
}
