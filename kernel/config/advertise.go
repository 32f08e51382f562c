package config

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// advertiseForms lists the forms SplitAdvertise takes, for its errors.
const advertiseForms = "HOST, HOST:PORT, [IPv6], [IPv6]:PORT, :PORT or a network interface name (eth1)"

// SplitAdvertise splits v, the address a provider publishes in its
// registry entries instead of the one it listens on (Dubbo's
// DUBBO_IP_TO_REGISTRY and DUBBO_PORT_TO_REGISTRY; serve --advertise, the
// file's advertise key, AIRNODE_ADVERTISE, the provider URL key
// advertise), into host and port:
//
//	10.0.0.5:30880         host and port
//	10.0.0.5, node7.lan    host; port 0: the port the provider listens on
//	[2001:db8::5]:30880    IPv6 in brackets, with or without a port
//	:30880                 port; host "": the host the provider would publish anyway
//	eth1, eth1:30880       a host name, or the name of a network interface
//	                       (the kernel publishes that interface's address)
//
// The port is 1-65535. Errors (no component prefix; the caller names the
// setting): an empty value, an IPv6 address without brackets ("IPv6
// addresses need brackets: [::1]:20880"), a bad port, an unspecified host
// (0.0.0.0, [::]: no consumer can dial it), and a host that is neither an
// IP address nor a name (letters, digits, '-', '_' and '.', at most 253
// bytes): "http://x", "a b".
func SplitAdvertise(v string) (host string, port int, err error) {
	if strings.TrimSpace(v) == "" {
		return "", 0, fmt.Errorf("empty: want %s", advertiseForms)
	}
	rest := ""
	switch {
	case strings.HasPrefix(v, "["):
		end := strings.IndexByte(v, ']')
		if end < 0 {
			return "", 0, fmt.Errorf("%q has no closing bracket: want [IPv6] or [IPv6]:PORT", v)
		}
		host, rest = v[1:end], v[end+1:]
		if ip := net.ParseIP(host); ip == nil || ip.To4() != nil || strings.Contains(host, ".") {
			return "", 0, fmt.Errorf("%q: %q in brackets is not an IPv6 address (brackets are for IPv6 only: write an IPv4 address or a name without them)", v, host)
		}
		if rest != "" && !strings.HasPrefix(rest, ":") {
			return "", 0, fmt.Errorf("%q: want [IPv6] or [IPv6]:PORT, not %q after the bracket", v, rest)
		}
	case strings.Count(v, ":") > 1:
		if net.ParseIP(v) != nil {
			return "", 0, fmt.Errorf("%q: IPv6 addresses need brackets: [%s], or [%s]:PORT", v, v, v)
		}
		if i := strings.LastIndexByte(v, ':'); net.ParseIP(v[:i]) != nil {
			return "", 0, fmt.Errorf("%q: IPv6 addresses need brackets: [%s]:%s", v, v[:i], v[i+1:])
		}
		return "", 0, fmt.Errorf("%q is not an address: want %s", v, advertiseForms)
	default:
		host = v
		if i := strings.IndexByte(v, ':'); i >= 0 {
			host, rest = v[:i], v[i:]
		}
	}
	if rest != "" {
		p := rest[1:]
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 1 || n > 65535 || p != strconv.Itoa(n) {
			return "", 0, fmt.Errorf("port %q of %q must be 1-65535 (leave the port out to publish the one listened on)", p, v)
		}
		port = n
	}
	if host == "" {
		return "", port, nil // ":30880": the port only
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsUnspecified() {
			return "", 0, fmt.Errorf("%q: %s is every interface, not an address a consumer can dial: give this host's address, a name, or an interface name", v, host)
		}
		return ip.String(), port, nil
	}
	if !hostName(host) {
		return "", 0, fmt.Errorf("%q: host %q is neither an IP address nor a name: want %s", v, host, advertiseForms)
	}
	if strings.Trim(host, "0123456789.") == "" {
		// digits and dots only: a bad IP address, not a name
		return "", 0, fmt.Errorf("%q: host %q is not an IP address (four numbers 0-255) nor a name", v, host)
	}
	return host, port, nil
}

// hostName reports whether s can be a host name or an interface name:
// 1-253 bytes of letters, digits, '-', '_' and '.', not starting or ending
// with '.' or '-'.
func hostName(s string) bool {
	if len(s) == 0 || len(s) > 253 || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") || strings.HasPrefix(s, "-") {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
