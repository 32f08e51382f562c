package kernel

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// keyAdvertise is the provider URL key of the address Export publishes
// instead of the one it listens on (serve --advertise; Dubbo's
// DUBBO_IP_TO_REGISTRY and DUBBO_PORT_TO_REGISTRY). It is not published.
const keyAdvertise = "advertise"

// advertiseAddr is the address an advertise value asks Export to
// publish: host "" keeps the host Export would publish, port 0 the port
// listened on.
type advertiseAddr struct {
	host string
	port int
}

// readAdvertise returns pu's advertise value (the zero advertiseAddr when
// absent): config.SplitAdvertise's forms, with a network interface name
// replaced by that interface's address (interfaceIP), as Dubbo's
// dubbo.network.interface.preferred picks the interface to publish. A
// host that names no interface is a host name, published as given. Errors
// name the key and the value.
func readAdvertise(pu spi.URL) (advertiseAddr, error) {
	v, ok := pu.Param(keyAdvertise)
	if !ok {
		return advertiseAddr{}, nil
	}
	host, port, err := config.SplitAdvertise(v)
	if err != nil {
		return advertiseAddr{}, fmt.Errorf("URL key %q: %w", keyAdvertise, err)
	}
	if host != "" && net.ParseIP(host) == nil {
		if ifc, err := net.InterfaceByName(host); err == nil {
			ip, err := interfaceIP(ifc)
			if err != nil {
				return advertiseAddr{}, fmt.Errorf("URL key %q: %q: %w", keyAdvertise, v, err)
			}
			host = ip
		}
	}
	return advertiseAddr{host: host, port: port}, nil
}

// apply returns u with the address a asks for: a's host and port where
// set, u's otherwise.
func (a advertiseAddr) apply(u spi.URL) spi.URL {
	if a == (advertiseAddr{}) {
		return u
	}
	host, port := u.Host(), u.Port()
	if a.host != "" {
		host = a.host
	}
	if a.port != 0 {
		port = a.port
	}
	return u.WithAddress(host, port)
}

// interfaceIP returns the address of network interface ifc that a
// provider advertising it publishes: its first global unicast IPv4
// address, else its first IPv4 address (127.0.0.1 for lo), else its
// first global unicast IPv6 address, else its first IPv6 address that is
// not link-local (a link-local one needs a zone no consumer has). An
// interface that is down, or has none of these, is an error naming it.
func interfaceIP(ifc *net.Interface) (string, error) {
	if ifc.Flags&net.FlagUp == 0 {
		return "", fmt.Errorf("network interface %s is down: no address to publish", ifc.Name)
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return "", fmt.Errorf("network interface %s: %w", ifc.Name, err)
	}
	var ips []net.IP
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			ips = append(ips, ipn.IP)
		}
	}
	for _, pick := range []func(net.IP) bool{
		func(ip net.IP) bool { return ip.To4() != nil && ip.IsGlobalUnicast() },
		func(ip net.IP) bool { return ip.To4() != nil },
		func(ip net.IP) bool { return ip.To4() == nil && ip.IsGlobalUnicast() },
		func(ip net.IP) bool { return ip.To4() == nil && !ip.IsLinkLocalUnicast() },
	} {
		for _, ip := range ips {
			if pick(ip) {
				return ip.String(), nil
			}
		}
	}
	return "", fmt.Errorf("network interface %s has no address to publish (none, or link-local only)", ifc.Name)
}

// nameLookupTimeout bounds warnNameAddresses' lookup of a listen host name.
const nameLookupTimeout = 2 * time.Second

// warnNameAddresses logs one warning when requested, the host of a listen
// address, is a name (not an IP address) that resolves to more than one
// address: Go's Listen listens on one of them only (bound), which Export
// publishes, so consumers that resolve the name to another get
// "connection refused". Names whose addresses are
// all loopback (localhost: 127.0.0.1 and ::1) are this host's either way
// and pass. lookup is net.DefaultResolver.LookupIPAddr outside tests; a
// lookup that fails or takes longer than nameLookupTimeout says nothing.
func warnNameAddresses(log *slog.Logger, lookup func(context.Context, string) ([]net.IPAddr, error), requested string, bound net.Addr) {
	if requested == "" || net.ParseIP(requested) != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), nameLookupTimeout)
	defer cancel()
	addrs, err := lookup(ctx, requested)
	if err != nil {
		return
	}
	var ips []string
	loopback := true
	for _, a := range addrs {
		loopback = loopback && a.IP.IsLoopback()
		if s := a.IP.String(); !slices.Contains(ips, s) {
			ips = append(ips, s)
		}
	}
	if len(ips) < 2 || loopback {
		return
	}
	port := ""
	if _, p, err := net.SplitHostPort(bound.String()); err == nil {
		port = p
	}
	log.Warn(fmt.Sprintf("listen host %s has %d addresses, and the provider listens on one of them only, which it publishes: consumers that resolve %s to another one cannot connect; listen on 0.0.0.0:%s (every interface) and publish the address consumers should dial (serve --advertise, URL key advertise), or listen on one IP address",
		requested, len(ips), requested, port),
		"host", requested, "addresses", strings.Join(ips, ","), "listening", bound.String())
}

// PlannedAddress returns the address Export would publish for provider
// URL u, without listening: u's advertise key when it gives a host and a
// port; else the listen host as advertised resolves it (an IP address as
// is; a name, the address net.Listen would bind, its first IPv4 one;
// every interface, this host's first non-loopback address) with the
// advertise key's host or port where it gives one. A port still 0 is
// picked at listen ("HOST:0"). Errors: a bad advertise value, a listen
// name that does not resolve. `airnode list --explain` shows it.
func PlannedAddress(u spi.URL) (string, error) {
	adv, err := readAdvertise(u)
	if err != nil {
		return "", err
	}
	host := u.Host()
	if adv.host == "" {
		if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
			host = localIP()
		} else if ip == nil {
			a, err := net.ResolveTCPAddr("tcp", net.JoinHostPort(host, "0"))
			if err != nil {
				return "", fmt.Errorf("listen host %s: %w", host, err)
			}
			host = a.IP.String()
		}
	}
	return adv.apply(u.WithAddress(host, u.Port())).Address(), nil
}

// warnLoopbackPublished logs once per node, registry URL and published
// address that Export publishes a loopback address (127.0.0.0/8, ::1),
// pu's, in the registry of regURL for service key: at Warn when the
// registry is one other hosts read (spi.ReachShared, and its URL names a
// host to connect to: zookeeper://10.0.0.1:2181), since consumers there
// would dial their own loopback (Dubbo never registers a loopback
// address); at Debug for a shared registry whose URL names no host
// (file:///dir, one machine's directory, whose consumers share this
// loopback); not at all for a registry that reaches no other process
// (memory, direct). requested is the URL Export was given (its host as
// written) and adv its advertise value; they say why the address is
// loopback: it was advertised, the provider listens on a loopback
// address, or it listens on every interface and no other one was up.
func (n *Node) warnLoopbackPublished(key string, requested, pu spi.URL, adv advertiseAddr, regURL spi.URL) {
	ip := net.ParseIP(pu.Host())
	if ip == nil || !ip.IsLoopback() || regURL.IsZero() {
		return
	}
	b, err := n.cat.Registry.Get(regURL.Scheme())
	if err != nil {
		return
	}
	if r, ok := b.(spi.RegistryReacher); ok && r.Reach() != spi.ReachShared {
		return
	}
	if _, done := n.loopbackWarned.LoadOrStore(regURL.String()+"|"+pu.Address(), true); done {
		return
	}
	why := "it listens on a loopback address (" + requested.Address() + ")"
	if rh := net.ParseIP(requested.Host()); adv.host != "" {
		why = "it is the address advertised (URL key advertise)"
	} else if requested.Host() == "" || rh != nil && rh.IsUnspecified() {
		why = "no network interface but loopback was up when it started (it listens on every interface)"
	}
	msg := fmt.Sprintf("publishing a loopback address, %s, to a registry other hosts read: %s; consumers on other hosts would dial their own loopback (nothing, or an unrelated process). Publish an address other hosts reach with the URL key advertise=HOST[:PORT] or an interface name (serve --advertise HOST[:PORT], config key advertise, AIRNODE_ADVERTISE), or listen on one (serve --listen IP:PORT)", pu.Address(), why)
	level := slog.LevelWarn
	if regURL.Host() == "" {
		level = slog.LevelDebug // one machine's registry: its consumers share this loopback
	}
	n.logger.Log(context.Background(), level, msg, "service", key, "registry", regURL.Redacted())
}
