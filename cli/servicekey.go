package cli

import (
	"fmt"
	"net"
	"strings"

	"github.com/airnode/airnode/spi"
)

// parseServiceKey parses SERVICE_URL as call, bench and registry take it:
// a full URL ("airnode://host:port/demo.Echo?k=v"), or a service key with
// optional URL parameters, "[group/]interface[:version][?k=v&...]"
// ("g/demo.Echo:1.0?loadbalance=roundrobin", "demo.Echo?accesslog=/tmp/a.log").
//
// The query is split off first, so a "/" or ":" in a parameter value is not
// taken for the group or version separator. A group or version given both
// in the key and as a parameter must agree; otherwise the error names both.
// Errors: an empty interface, a malformed query or URL.
func parseServiceKey(s string) (spi.URL, error) {
	key, query, hasQuery := strings.Cut(s, "?")
	if strings.Contains(key, "://") {
		return spi.Parse(s)
	}
	params := map[string]string{}
	iface := key
	if g, rest, ok := strings.Cut(iface, "/"); ok {
		if h, p, err := net.SplitHostPort(g); err == nil && h != "" && isDigits(p) {
			return spi.URL{}, fmt.Errorf("service %q: %q looks like host:port, not a group: for a direct call write airnode://%s/%s", s, g, g, rest)
		}
		params[spi.KeyGroup], iface = g, rest
	}
	if i, v, ok := strings.Cut(iface, ":"); ok {
		iface, params[spi.KeyVersion] = i, v
	}
	if iface == "" || strings.ContainsAny(iface, "/:") {
		return spi.URL{}, fmt.Errorf("service %q: want [group/]interface[:version][?key=value&...]", s)
	}
	raw := "airnode:///" + iface
	if hasQuery {
		raw += "?" + query
	}
	u, err := spi.Parse(raw)
	if err != nil {
		return spi.URL{}, fmt.Errorf("service %q: %w", s, err)
	}
	for k, v := range params {
		if q, ok := u.Param(k); ok && q != v {
			return spi.URL{}, fmt.Errorf("service %q: %s %q in the key but %s=%s in the parameters", s, k, v, k, q)
		}
	}
	return u.WithParams(params), nil
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
