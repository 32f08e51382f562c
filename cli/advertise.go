package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
)

// Dubbo's environment variables of the address a provider registers
// (Dubbo's ServiceConfig findConfiguredHosts / findConfiguredPort): serve
// reads them as aliases of AIRNODE_ADVERTISE when no advertise setting is
// given (--advertise, AIRNODE_ADVERTISE, the file's advertise key), so a
// container spec written for a Dubbo provider keeps working.
const (
	envDubboIP   = "DUBBO_IP_TO_REGISTRY"
	envDubboPort = "DUBBO_PORT_TO_REGISTRY"
)

// withDubboAdvertise returns cfg with its Advertise setting taken from
// Dubbo's DUBBO_IP_TO_REGISTRY and DUBBO_PORT_TO_REGISTRY in environ when
// cfg has none: "IP:PORT", "IP" (the port listened on) or ":PORT" (the
// host serve would publish anyway); an IPv6 address is bracketed. A bad
// value is an error naming the variable. cfg is returned as is when it
// has an advertise setting or neither variable is set (empty counts as
// unset, as for AIRNODE_ variables).
func withDubboAdvertise(cfg config.Config, environ []string) (config.Config, error) {
	if cfg.Advertise != "" {
		return cfg, nil
	}
	var ip, port string
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, envDubboIP+"="); ok {
			ip = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(kv, envDubboPort+"="); ok {
			port = strings.TrimSpace(v)
		}
	}
	if ip == "" && port == "" {
		return cfg, nil
	}
	if strings.Contains(ip, ":") && !strings.HasPrefix(ip, "[") {
		ip = "[" + ip + "]"
	}
	v := ip
	if port != "" {
		v += ":" + port
	}
	if _, _, err := config.SplitAdvertise(v); err != nil {
		return cfg, fmt.Errorf("serve: environment %s=%q %s=%q (Dubbo's, read as --advertise %s): %w", envDubboIP, ip, envDubboPort, port, v, err)
	}
	cfg.Advertise = v
	return cfg, nil
}

// advertiseParam returns the flagParam of cfg's Advertise setting: the
// provider URL key advertise on every export (the kernel publishes that
// address instead of the one listened on; readAdvertise), refused when
// -p advertise= gives another value. ok is false without a setting.
func advertiseParam(cfg config.Config) (p flagParam, ok bool) {
	if cfg.Advertise == "" {
		return flagParam{}, false
	}
	return flagParam{"--advertise", cfg.Advertise, "advertise", cfg.Advertise}, true
}

// warnPublished checks the addresses serve's exports publish (exps; listen
// is the --listen address as given) and logs, once per published
// address, an address of this host the provider does not listen on
// (--listen 127.0.0.1:P --advertise 127.0.0.2): consumers dialling it
// are refused, unless a port-forward on this host sends it there. A
// loopback address published to a registry other hosts read is the
// kernel's warning (Node.Export logs it, for Go programs too), not this.
func warnPublished(logger *slog.Logger, listen string, exps []*kernel.Exporter) {
	listenHost, _, _ := net.SplitHostPort(listen)
	listenIP := net.ParseIP(listenHost)
	every := listenHost == "" || listenIP != nil && listenIP.IsUnspecified()
	seen := map[string]bool{}
	for _, e := range exps {
		addr := e.URL().Address()
		if seen[addr] {
			continue
		}
		seen[addr] = true
		ip := net.ParseIP(e.URL().Host())
		if ip == nil {
			continue // a name given to --advertise: published as given
		}
		if !every && listenIP != nil && !ip.Equal(listenIP) && localAddress(ip) {
			logger.Warn(fmt.Sprintf("airnode serve: publishing %s, an address of this host the provider does not listen on (it listens on %s only): consumers dialling it are refused unless a port-forward on this host sends it there; listen on every interface (--listen 0.0.0.0:PORT or :PORT), or publish the address listened on", addr, listenIP),
				"published", addr, "listen", listen)
		}
	}
}

// localAddress reports whether ip is an address of this host: loopback
// (all of 127.0.0.0/8 on Linux) or one of its interfaces'.
func localAddress(ip net.IP) bool {
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// publishRow returns list --explain's "publish" row for service iface
// (cfg.Services[svc], or none when svc < 0): the address serve with cfg
// would publish for it (kernel.PlannedAddress of the URL serve exports:
// the listen address, the service's parameters, cfg's advertise setting),
// the listen address, and what changes it; or the error that would stop
// serve. Dubbo's DUBBO_IP_TO_REGISTRY and DUBBO_PORT_TO_REGISTRY are not
// read here.
func publishRow(cfg config.Config, iface string, svc int) string {
	s := config.Service{Interface: iface}
	if svc >= 0 && svc < len(cfg.Services) {
		s = cfg.Services[svc]
	}
	u, err := cfg.ExportURL(s)
	if err == nil && cfg.Advertise != "" {
		u = u.With("advertise", cfg.Advertise)
	}
	addr := ""
	if err == nil {
		addr, err = kernel.PlannedAddress(u)
	}
	if err != nil {
		return "serve would fail: " + err.Error()
	}
	if _, set := u.Param("advertise"); set {
		return fmt.Sprintf("%s (serve listens on %s and publishes this, its advertise setting)", addr, cfg.Listen)
	}
	return fmt.Sprintf("%s (serve listens on %s and publishes this; --advertise HOST[:PORT] publishes another)", addr, cfg.Listen)
}

// advertiseResolveTimeout bounds checkAdvertiseHost's DNS lookup.
const advertiseResolveTimeout = 2 * time.Second

// checkAdvertiseHost checks, at serve's start, the host of the advertise
// setting v (--advertise, AIRNODE_ADVERTISE, the file's advertise key or
// Dubbo's DUBBO_IP_TO_REGISTRY): an IP address, no host (":PORT") or an
// interface of this host is fine; a name is looked up, for at most
// advertiseResolveTimeout. A name the resolver says does not exist
// (NXDOMAIN, "no such host") is an error naming the setting and the
// value: published, it made every consumer fail on DNS, and a name that
// resolves nowhere on the provider's own host is most likely a mistyped
// interface name (nosuchif0 for eth0). A lookup that fails otherwise
// (timeout, no DNS server reachable) is a Warn, and serve goes on.
func checkAdvertiseHost(ctx context.Context, v string, logger *slog.Logger) error {
	if v == "" {
		return nil
	}
	host, _, err := config.SplitAdvertise(v)
	if err != nil || host == "" || net.ParseIP(host) != nil {
		return nil // errors are SplitAdvertise's, reported where it is applied
	}
	if _, err := net.InterfaceByName(host); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, advertiseResolveTimeout)
	defer cancel()
	_, err = net.DefaultResolver.LookupHost(ctx, host)
	if err == nil {
		return nil
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return fmt.Errorf("serve: --advertise %s: %q is neither an interface of this host (%s) nor a name it resolves (%v): consumers could not connect to it; give an interface name, an IP address or a resolvable name",
			v, host, interfaceNames(), err)
	}
	logger.Warn(fmt.Sprintf("airnode serve: cannot check the advertised name %q within %v: %v; publishing it as given", host, advertiseResolveTimeout, err),
		"advertise", v)
	return nil
}

// interfaceNames returns this host's interface names, comma-separated,
// for a message ("lo, eth0"); "none found" when there are none.
func interfaceNames() string {
	ifs, err := net.Interfaces()
	if err != nil || len(ifs) == 0 {
		return "none found"
	}
	names := make([]string, len(ifs))
	for i, ifc := range ifs {
		names[i] = ifc.Name
	}
	return "interfaces: " + strings.Join(names, ", ")
}
