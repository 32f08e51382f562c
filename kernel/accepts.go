package kernel

import (
	"fmt"
	"math"
	"os"

	"github.com/airnode/airnode/internal/netaccept"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// Provider URL keys of a listening address that bound its consumer
// connections (exchange.ConnectionLimit): accepts, Dubbo's "the maximum
// number of connections the provider accepts", integer, 0 or absent: the
// process's open-file limit minus a reserve (netaccept.DefaultAccepts)
// minus the descriptors open at listen (defaultAccepts), up to
// 2147483647; accepts.per.ip, the most from one peer IP address,
// integer, 0 or absent: no such limit, up to 2147483647.
const (
	keyAccepts      = exchange.KeyAccepts
	keyAcceptsPerIP = exchange.KeyAcceptsPerIP
)

// listenAccepts is acceptsOpen with the process's open-file limit and
// its open descriptors as they are now (netaccept.OpenFileLimit,
// openDescriptors): the server calls it as it listens. fdsOpen is the
// descriptors counted, -1 where they cannot be counted.
func listenAccepts(pu spi.URL) (l exchange.ConnectionLimit, warn string, fdsOpen int, err error) {
	open, known := openDescriptors()
	if !known {
		open = -1
	}
	l, warn, err = acceptsOpen(pu, netaccept.OpenFileLimit, open)
	return l, warn, open, err
}

// openDescriptors counts the descriptors the process has open (the
// entries of /proc/self/fd, less the one reading it); ok is false where
// there is no /proc/self/fd (systems other than Linux).
func openDescriptors() (n int, ok bool) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, false
	}
	return max(len(ents)-1, 0), true
}

// minDefaultAccepts is the floor of the accepts default when the
// descriptors already open at listen take most of the open-file limit:
// a provider accepting no consumer is down for good, while one that runs
// out of descriptors with a few dozen consumers retries its accepts (and
// says so at Warn, internal/netaccept) and frees them as they leave.
// Never above netaccept.DefaultAccepts of the limit, which is half the
// limit (rounded up) under 128: the floor is 32, or half the limit when
// the limit is under 64 (ulimit -n 40: 20), since a
// provider whose limit is 40 cannot keep 32 connections and the
// descriptors it needs itself.
const minDefaultAccepts = 32

// defaultAccepts is the accepts default with an open-file limit of limit
// and open descriptors open at listen (registry entries, plugin
// processes, log files, other listeners; negative: unknown, not
// subtracted): netaccept.DefaultAccepts(limit), the limit less a reserve
// of max(64, 10 %), less open, at least min(minDefaultAccepts,
// DefaultAccepts(limit)). floored says the floor applied.
func defaultAccepts(limit uint64, open int) (n int, floored bool) {
	def := netaccept.DefaultAccepts(limit)
	if open <= 0 {
		return def, false
	}
	floor := min(minDefaultAccepts, def)
	if def-open < floor {
		return floor, true
	}
	return def - open, false
}

// acceptsLimit is acceptsOpen counting no descriptor open.
func acceptsLimit(pu spi.URL, fdLimit func() (uint64, bool)) (exchange.ConnectionLimit, string, error) {
	return acceptsOpen(pu, fdLimit, -1)
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
//
// acceptsOpen is acceptsLimit with open descriptors already open
// (negative: unknown): the default is defaultAccepts(limit, open), with a
// warn line when its floor applied.
func acceptsOpen(pu spi.URL, fdLimit func() (uint64, bool), open int) (l exchange.ConnectionLimit, warn string, err error) {
	limit, known := fdLimit()
	def, floored := 0, false
	if known {
		def, floored = defaultAccepts(limit, open)
	}
	n, err := acceptsKey(pu, keyAccepts, "a number of connections from 1 to 2147483647, or 0 for the default (the open-file limit, ulimit -n, minus a reserve)")
	if err != nil {
		return l, "", err
	}
	l.Max = def
	if n == 0 && floored {
		warn = fmt.Sprintf("%d descriptors are open already, of the open-file limit %d (RLIMIT_NOFILE, ulimit -n): the default %s is its floor, %d; raise ulimit -n",
			open, limit, keyAccepts, def)
	}
	if n > 0 {
		l.Max = n
		if known && uint64(n) > limit {
			warn = fmt.Sprintf("%s=%d is above the process's open-file limit %d (RLIMIT_NOFILE, ulimit -n): consumers can take every descriptor, leaving none for the registry, plugins, outgoing calls and log files; the default (%s=0) would be %d",
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
