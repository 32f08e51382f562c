package zookeeper

import (
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/airnode/airnode/internal/suggest"
	"github.com/airnode/airnode/spi"
)

// URL keys of the zookeeper registry.
const (
	KeyRoot           = "root"            // string, default DefaultRoot
	KeySessionTimeout = "session.timeout" // duration, default DefaultSessionTimeout
	KeyConnectTimeout = "connect.timeout" // duration, default DefaultConnectTimeout
	KeyFileCache      = "file.cache"      // path, default "" (no cache)
	// KeyCheck is Dubbo's registry check: true (the default) makes a
	// provider's Register fail when no session comes within
	// connect.timeout, so that a node fails at start rather than serve
	// registered nowhere, and a Subscribe with no file.cache entry fail
	// too; false queues the entry and creates it when a session comes
	// (Dubbo's check=false failback), and starts a subscription with an
	// empty list, the providers following with the session.
	KeyCheck = "check" // bool, default true
)

// Defaults and bounds.
const (
	DefaultRoot           = "airnode"
	DefaultSessionTimeout = 30 * time.Second
	MinSessionTimeout     = 400 * time.Millisecond
	MaxSessionTimeout     = time.Hour
	DefaultConnectTimeout = 5 * time.Second
	MinConnectTimeout     = 10 * time.Millisecond
	MaxConnectTimeout     = time.Minute
)

var knownKeys = []string{spi.KeyBackup, KeyCheck, KeyConnectTimeout, KeyFileCache, KeyRoot, KeySessionTimeout}

// dubboKeys maps the keys of a Dubbo ZooKeeper registry URL that this
// registry names otherwise (or needs not) to what to write instead: an
// unknown key error names it (tester74 #8).
var dubboKeys = map[string]string{
	"group":   "Dubbo's registry group is the root node: use root= (group=dubbo is root=/dubbo, Dubbo's tree)",
	"timeout": "Dubbo's registry timeout: use connect.timeout= (a duration: 5s; a bare number is milliseconds, timeout=5000 is connect.timeout=5000)",
	"session": "Dubbo's registry session timeout: use session.timeout= (a duration: 60s; a bare number is milliseconds, session=60000 is session.timeout=60000)",
	"client":  "Dubbo's choice of ZooKeeper client (curator, zkclient): not needed, this registry has one client (go-zookeeper); remove it",
}

type params struct {
	servers        []string
	chroot         string // the URL's path as a ZooKeeper chroot: "/chroot16", or ""
	root           string // chroot + "/" + root= ("/chroot16/airnode", "/airnode"), or "" for the ZooKeeper root
	sessionTimeout time.Duration
	connectTimeout time.Duration
	cache          string
	check          bool // check=: a provider's Register fails without a session
	user, password string
}

// keyValueError is parseParams' refusal msg of key's value in u, a value
// of the right form out of the key's bounds: a *spi.KeyError naming the
// key and the value as written, so that a command line that gave them is
// told so (a usage error), as for an unknown key.
func keyValueError(u spi.URL, key, msg string) error {
	return &spi.KeyError{Keys: []string{key}, Values: []string{u.ParamOr(key, "")}, Msg: msg}
}

func parseParams(u spi.URL) (params, error) {
	var p params
	if u.Scheme() != Name {
		return p, fmt.Errorf("zookeeper registry: scheme %q in %q, want %q", u.Scheme(), u, Name)
	}
	for _, k := range u.Keys() {
		if !slices.Contains(knownKeys, k) {
			msg := fmt.Sprintf("zookeeper registry: unknown URL key %q (known: %s)", k, strings.Join(knownKeys, ", "))
			if hint, ok := dubboKeys[k]; ok {
				msg += "; " + hint
			} else if m := suggest.Closest(k, knownKeys); m != "" {
				msg += fmt.Sprintf("; did you mean %q?", m)
			}
			v, _ := u.Param(k)
			return p, &spi.KeyError{Keys: []string{k}, Values: []string{v}, Msg: msg}
		}
	}
	if err := u.CheckBackup(); err != nil {
		return p, fmt.Errorf("zookeeper registry: %w", err)
	}
	for _, a := range u.Addresses() {
		host, port, err := net.SplitHostPort(a)
		if err != nil || host == "" {
			return p, fmt.Errorf("zookeeper registry: bad server address %q in %q", a, u)
		}
		if port == "0" {
			a = net.JoinHostPort(host, "2181")
		}
		p.servers = append(p.servers, a)
	}
	if len(p.servers) == 0 {
		return p, fmt.Errorf("zookeeper registry: no server address in %q (want zookeeper://host:2181)", u)
	}
	// Dubbo writes the root as an absolute path ("/dubbo"): one leading
	// '/' is accepted and means the same node ("root=/teamA" is "teamA",
	// "root=/" the ZooKeeper root).
	var err error
	raw := u.ParamOr(KeyRoot, DefaultRoot)
	p.root = strings.TrimPrefix(raw, "/")
	if strings.Contains(p.root, "/") {
		return p, keyValueError(u, KeyRoot, fmt.Sprintf("zookeeper registry: %s=%q must be one node name, with no '/' but an optional leading one (root=teamA or root=/teamA)", KeyRoot, raw))
	}
	if p.root != "" {
		p.root = "/" + p.root
	}
	if p.chroot, err = chrootOf(u); err != nil {
		return p, err
	}
	p.root = p.chroot + p.root
	if p.sessionTimeout, err = u.Duration(KeySessionTimeout, DefaultSessionTimeout); err != nil {
		return p, fmt.Errorf("zookeeper registry: %w", err)
	}
	if p.sessionTimeout < MinSessionTimeout || p.sessionTimeout > MaxSessionTimeout {
		return p, keyValueError(u, KeySessionTimeout, fmt.Sprintf("zookeeper registry: %s=%v out of range %v..%v%s", KeySessionTimeout, p.sessionTimeout, MinSessionTimeout, MaxSessionTimeout, spi.BareMillisTail(u, KeySessionTimeout, p.sessionTimeout, MinSessionTimeout)))
	}
	if p.connectTimeout, err = u.Duration(KeyConnectTimeout, DefaultConnectTimeout); err != nil {
		return p, fmt.Errorf("zookeeper registry: %w", err)
	}
	if p.connectTimeout < MinConnectTimeout || p.connectTimeout > MaxConnectTimeout {
		return p, keyValueError(u, KeyConnectTimeout, fmt.Sprintf("zookeeper registry: %s=%v out of range %v..%v%s", KeyConnectTimeout, p.connectTimeout, MinConnectTimeout, MaxConnectTimeout, spi.BareMillisTail(u, KeyConnectTimeout, p.connectTimeout, MinConnectTimeout)))
	}
	p.cache = u.ParamOr(KeyFileCache, "")
	if p.check, err = u.Bool(KeyCheck, true); err != nil {
		return p, fmt.Errorf("zookeeper registry: %w", err)
	}
	p.user, p.password = u.User(), u.Password()
	return p, nil
}

// DubboRegistryPaths are URL paths that name Dubbo's registry service
// rather than a chroot: Dubbo gives its registry URLs this path
// (zookeeper://h:2181/org.apache.dubbo.registry.RegistryService?...), so
// such a URL, copied from a Dubbo configuration or log, means the tree
// Dubbo uses, with no chroot.
var DubboRegistryPaths = []string{
	"org.apache.dubbo.registry.RegistryService",
	"com.alibaba.dubbo.registry.RegistryService",
}

// chrootOf returns the chroot the URL's path names, "/a" or "/a/b" (a
// trailing '/' is dropped), or "" for no path or one of
// DubboRegistryPaths. ZooKeeper's connect string "h:2181/a" (Curator,
// Kafka's zookeeper.connect) puts every node under /a; here the node is
// created when missing. Errors name an empty, "." or ".." node name.
func chrootOf(u spi.URL) (string, error) {
	path := strings.TrimSuffix(u.Path(), "/")
	if path == "" || slices.Contains(DubboRegistryPaths, path) {
		return "", nil
	}
	for _, n := range strings.Split(path, "/") {
		if n == "" || n == "." || n == ".." {
			return "", fmt.Errorf("zookeeper registry: chroot %q in %q has a node name %q; want zookeeper://h:2181/chroot or zookeeper://h:2181/a/b", "/"+path, u.Redacted(), n)
		}
	}
	return "/" + path, nil
}
