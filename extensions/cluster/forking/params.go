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

// parseForks resolves forks for method ("" for the service level).
func parseForks(u spi.URL, method string) (int, error) {
	n, err := u.MethodInt(method, KeyForks, DefaultForks)
	if err != nil {
		return 0, err
	}
	if n < 1 || n > MaxForks {
		v, src, _ := u.MethodParam(method, KeyForks)
		return 0, &spi.ParamError{Key: src, Value: v, Want: "an integer from 1 to 100"}
	}
	return int(n), nil
}
