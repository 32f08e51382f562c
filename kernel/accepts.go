package kernel

import (
	"fmt"
	"math"

	"github.com/airnode/airnode/internal/netaccept"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// Provider URL keys of a listening address that bound its consumer
// connections (exchange.ConnectionLimit): accepts, Dubbo's "the maximum
// number of connections the provider accepts", integer, 0 or absent: the
// process's open-file limit minus a reserve (netaccept.DefaultAccepts),
// up to 2147483647; accepts.per.ip, the most from one peer IP address,
// integer, 0 or absent: no such limit, up to 2147483647.
const (
	keyAccepts      = exchange.KeyAccepts
	keyAcceptsPerIP = exchange.KeyAcceptsPerIP
)

// listenAccepts is acceptsLimit with the process's open-file limit as it
// is now (netaccept.OpenFileLimit): the server calls it as it listens.
func listenAccepts(pu spi.URL) (exchange.ConnectionLimit, string, error) {
	return acceptsLimit(pu, netaccept.OpenFileLimit)
}

// acceptsLimit returns the connection limit provider URL pu sets on its
// listening address, with fdLimit the process's open-file limit
// (netaccept.OpenFileLimit, read once, when the server listens): accepts,
// or when it is 0 or absent netaccept.DefaultAccepts of the limit
// (unlimited where the limit is unknown or infinite), and accepts.per.ip.
// warn is "" or a line to log once: an accepts above the open-file limit
// is accepted, but then consumers can take every descriptor. err is a
// *spi.ParamError for a value that is not an integer from 0 to
// 2147483647.
func acceptsLimit(pu spi.URL, fdLimit func() (uint64, bool)) (l exchange.ConnectionLimit, warn string, err error) {
	limit, known := fdLimit()
	def := 0
	if known {
		def = netaccept.DefaultAccepts(limit)
	}
	n, err := acceptsKey(pu, keyAccepts, "a number of connections from 1 to 2147483647, or 0 for the default (the open-file limit, ulimit -n, minus a reserve)")
	if err != nil {
		return l, "", err
	}
	l.Max = def
	if n > 0 {
		l.Max = n
		if known && uint64(n) > limit {
			warn = fmt.Sprintf("kernel: %s=%d is above the process's open-file limit %d (RLIMIT_NOFILE, ulimit -n): consumers can take every descriptor, leaving none for the registry, plugins, outgoing calls and log files; the default (%s=0) would be %d",
				keyAccepts, n, limit, keyAccepts, def)
		}
	}
	if l.PerIP, err = acceptsKey(pu, keyAcceptsPerIP, "a number of connections from 1 to 2147483647, or 0 for no limit per peer IP"); err != nil {
		return l, "", err
	}
	return l, warn, nil
}

// acceptsKey reads integer key k of pu, 0 when absent, refusing a value
// outside 0..math.MaxInt32 with a *spi.ParamError that says want.
func acceptsKey(pu spi.URL, k, want string) (int, error) {
	n, err := pu.Int(k, 0)
	if err == nil && (n < 0 || n > math.MaxInt32) {
		err = &spi.ParamError{Key: k, Value: pu.ParamOr(k, ""), Want: want}
	}
	if err != nil {
		return 0, err
	}
	return int(n), nil
}
