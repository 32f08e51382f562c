package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// readAs renders v, a value or default of a URL key of type typ
// (spi.KeyType*), as list kernel shows typed defaults: a duration in
// its largest whole unit (the bare milliseconds URLs allow, and
// registry entries carry as Dubbo does: "200" reads "200ms", "600000"
// "10m"; formatDuration), a
// size in its largest whole binary unit ("1048576" reads "1MiB", "1000"
// "1000B"); a value with its unit already, of another type, or that does
// not parse (the errors name it) as it is. Every form shown is one the
// key accepts.
func readAs(typ, v string) string {
	t := strings.TrimSpace(v)
	if t == "" || strings.Trim(t, "0123456789") != "" {
		return v // not a bare number: written with its unit, or not one
	}
	switch typ {
	case spi.KeyTypeDuration:
		if d, err := spi.ParseDuration(t); err == nil {
			return formatDuration(d)
		}
	case spi.KeyTypeSize:
		if n, err := spi.ParseSize(t); err == nil {
			return formatBytes(n)
		}
	}
	return v
}

// readAsGiven is readAs for a value a URL or the configuration gave,
// which keeps the value as written when that reads otherwise: "200ms
// (written 200)".
func readAsGiven(typ, v string) string {
	r := readAs(typ, v)
	if r == strings.TrimSpace(v) {
		return v
	}
	return fmt.Sprintf("%s (written %s)", r, v)
}

// formatDuration renders d in its largest whole unit, h, m, s or ms
// ("10m", not Go's "10m0s"), else Go's form ("1.5s", "1m30s").
func formatDuration(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if d >= u.d && d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	if d == 0 {
		return "0s"
	}
	return d.String()
}

// formatBytes renders n bytes in its largest whole binary unit ("8MiB",
// "64KiB", "1000B"), as spi.ParseSize reads them back.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return strconv.FormatInt(n>>30, 10) + "GiB"
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "KiB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

// kernelKeyType returns the type of the kernel URL key key
// (kernel.KernelKeyDocs), "" for another key.
func kernelKeyType(key string) string {
	for _, d := range kernel.KernelKeyDocs() {
		if d.Key == key {
			return d.Type
		}
	}
	return ""
}
