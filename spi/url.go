package spi

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// URL is the Dubbo URL model: every address, registry entry and piece of
// per-service configuration in airnode is one of these.
//
//	scheme://[user[:password]@]host[:port][,host2:port2...][/path][?key=value&...]
//
// A URL is an immutable value: the With* methods return modified copies and
// never touch the receiver, so URLs may be shared between goroutines freely.
// String is canonical (parameters sorted by key, each part percent-encoded
// exactly once) and Parse(u.String()) equals u.
//
// The scheme is case-insensitive and kept in lower case. A URL has no
// fragment ('#' is refused by Parse). The userinfo part is for registries
// (the ZooKeeper registry's digest ACL); a service reference refuses it,
// since the airnode protocol has no login: a provider's secret is its
// token (?token=...).
//
// IPv6 hosts are written in brackets ("airnode://[::1]:20880/demo.Echo").
// Several hosts are written "h1:p1,h2:p2"; Dubbo's "?backup=h2:p2" parameter
// is kept as a parameter and included by Addresses.
type URL struct {
	scheme   string
	user     string
	password string
	hosts    []HostPort
	path     string
	params   map[string]string // never mutated after construction
}

// HostPort is one host of a URL. Port 0 means the URL gave no port.
type HostPort struct {
	Host string // a name or an IP address, IPv6 without brackets; "" when the URL gave none
	Port int    // 0 to 65535; 0: the URL gave none (or gave 0, "any port" for a listener)
}

// String renders host:port, bracketing IPv6 hosts; a zero Port is omitted.
func (h HostPort) String() string {
	host := h.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if h.Port == 0 {
		return host
	}
	return host + ":" + strconv.Itoa(h.Port)
}

// Param keys that the URL type itself reads.
const (
	KeyGroup     = "group"
	KeyVersion   = "version"
	KeyInterface = "interface"
	KeyMethods   = "methods"
	KeyBackup    = "backup"
	KeySide      = "side"
)

// NewURL builds a URL from its parts. path may start with "/"; params is
// copied; the scheme is kept in lower case, as Parse keeps it. It returns
// an error for an invalid scheme, host or parameter key.
func NewURL(scheme, host string, port int, path string, params map[string]string) (URL, error) {
	u := URL{scheme: strings.ToLower(scheme), path: strings.TrimPrefix(path, "/")}
	if err := checkScheme(scheme); err != nil {
		return URL{}, err
	}
	if port < 0 || port > 65535 {
		return URL{}, fmt.Errorf("url: port %d out of range 0-65535", port)
	}
	if err := checkHost(host); err != nil {
		return URL{}, err
	}
	u.hosts = []HostPort{{Host: host, Port: port}}
	if len(params) > 0 {
		u.params = make(map[string]string, len(params))
		for k, v := range params {
			if k == "" {
				return URL{}, errors.New("url: empty parameter key")
			}
			u.params[k] = v
		}
	}
	return u, nil
}

// MustParse is Parse for tests and constants: it panics on error.
func MustParse(s string) URL {
	u, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// Parse parses s. It returns an error that names the offending part for: a
// missing or invalid scheme, an unbracketed IPv6 address with a port, a bad
// port, an empty or repeated parameter key, a bad percent-escape, or a
// fragment ("#frag": no airnode URL has one, so a '#' would otherwise end
// up in the path or a value; a literal '#' is written %23).
// "key=" keeps key with an empty value (a bare "key" too).
//
// The scheme is case-insensitive (RFC 3986 §3.1): "AIRNODE://" parses as
// "airnode://", and Scheme and String give it in lower case.
func Parse(s string) (URL, error) {
	var u URL
	i := strings.Index(s, "://")
	if i < 0 {
		return URL{}, noSlashes(s)
	}
	u.scheme = s[:i]
	if err := checkScheme(u.scheme); err != nil {
		return URL{}, err
	}
	u.scheme = strings.ToLower(u.scheme)
	rest := s[i+3:]
	if f := strings.IndexByte(rest, '#'); f >= 0 {
		return URL{}, fmt.Errorf("url: %q has a fragment %q: airnode URLs have none (write a '#' that belongs to the path or a value as %%23)", s, rest[f:])
	}
	query := ""
	if q := strings.IndexByte(rest, '?'); q >= 0 {
		rest, query = rest[:q], rest[q+1:]
	}
	authority := rest
	if p := strings.IndexByte(rest, '/'); p >= 0 {
		authority, u.path = rest[:p], rest[p+1:]
		path, err := url.PathUnescape(u.path)
		if err != nil {
			return URL{}, fmt.Errorf("url: bad path %q: %w", u.path, err)
		}
		u.path = path
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		userinfo := authority[:at]
		authority = authority[at+1:]
		user, pass, hasPass := strings.Cut(userinfo, ":")
		var err error
		if u.user, err = url.QueryUnescape(user); err != nil {
			return URL{}, fmt.Errorf("url: bad user %q: %w", user, err)
		}
		if hasPass {
			if u.password, err = url.QueryUnescape(pass); err != nil {
				return URL{}, errors.New("url: bad password escape")
			}
		}
		if u.user == "" {
			return URL{}, fmt.Errorf("url: %q has an empty user before '@'", s)
		}
	}
	for _, hp := range strings.Split(authority, ",") {
		h, err := parseHostPort(hp)
		if err != nil {
			return URL{}, err
		}
		if h.Host == "" && len(strings.Split(authority, ",")) > 1 {
			return URL{}, fmt.Errorf("url: empty host in host list %q", authority)
		}
		u.hosts = append(u.hosts, h)
	}
	if query != "" {
		u.params = make(map[string]string)
		for _, kv := range strings.Split(query, "&") {
			if kv == "" {
				continue
			}
			k, v, _ := strings.Cut(kv, "=")
			key, err := url.QueryUnescape(k)
			if err != nil {
				return URL{}, fmt.Errorf("url: bad escape in parameter key %q: %w", k, err)
			}
			if key == "" {
				return URL{}, fmt.Errorf("url: empty parameter key in %q", kv)
			}
			val, err := url.QueryUnescape(v)
			if err != nil {
				return URL{}, fmt.Errorf("url: bad escape in value of %q: %w", key, err)
			}
			if _, dup := u.params[key]; dup {
				return URL{}, fmt.Errorf("url: parameter %q given twice", key)
			}
			u.params[key] = val
		}
		if len(u.params) == 0 {
			u.params = nil
		}
	}
	return u, nil
}

// noSlashes is Parse's error for s without "://": a scheme followed by
// ':' alone ("file:relative", "zookeeper:127.0.0.1:2181") is named as such,
// with file:///abs/dir for a "file:" URL (a path must be absolute); else s
// has no scheme.
func noSlashes(s string) error {
	scheme, rest, ok := strings.Cut(s, ":")
	if !ok || checkScheme(scheme) != nil || rest != "" && rest[0] >= '0' && rest[0] <= '9' {
		// "127.0.0.1:20880", "host:20880": a host and port, not a scheme
		return fmt.Errorf("url: %q has no scheme (want scheme://host[:port]/path)", s)
	}
	if strings.EqualFold(scheme, "file") {
		return fmt.Errorf("url: %q: a file URL is file:// and an absolute path, file:///abs/dir (a relative path is not allowed)", s)
	}
	return fmt.Errorf("url: %q: scheme %q is not followed by \"//\" (want %s://host[:port]/path)", s, scheme, strings.ToLower(scheme))
}

func checkScheme(s string) error {
	if s == "" {
		return errors.New("url: empty scheme")
	}
	for i, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
			i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')
		if !ok {
			return fmt.Errorf("url: invalid scheme %q (letters, then letters, digits, '+', '-', '.')", s)
		}
	}
	return nil
}

func checkHost(h string) error {
	for _, c := range h {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '-' || c == '_' || c == '~' || c == ':' || c == '%'
		if !ok {
			return fmt.Errorf("url: invalid character %q in host %q", c, h)
		}
	}
	return nil
}

func parseHostPort(s string) (HostPort, error) {
	var host, port string
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return HostPort{}, fmt.Errorf("url: missing ']' in host %q", s)
		}
		host = s[1:end]
		if !strings.Contains(host, ":") {
			return HostPort{}, fmt.Errorf("url: brackets around non-IPv6 host %q", s)
		}
		after := s[end+1:]
		if after != "" {
			if after[0] != ':' {
				return HostPort{}, fmt.Errorf("url: unexpected %q after ']' in %q", after, s)
			}
			port = after[1:]
			if port == "" {
				return HostPort{}, fmt.Errorf("url: empty port in %q", s)
			}
		}
	} else {
		switch strings.Count(s, ":") {
		case 0:
			host = s
		case 1:
			host, port, _ = strings.Cut(s, ":")
			if port == "" {
				return HostPort{}, fmt.Errorf("url: empty port in %q", s)
			}
		default:
			return HostPort{}, fmt.Errorf("url: IPv6 address %q must be in brackets, e.g. %s", s, bracketed(s))
		}
	}
	if err := checkHost(host); err != nil {
		return HostPort{}, err
	}
	h := HostPort{Host: host}
	if port != "" {
		p, err := strconv.Atoi(port)
		if err != nil || p < 0 || p > 65535 || strconv.Itoa(p) != port {
			return HostPort{}, fmt.Errorf("url: invalid port %q in %q (want 0-65535)", port, s)
		}
		h.Port = p
	}
	return h, nil
}

// bracketed returns s, a host:port whose host is an IPv6 address without
// brackets, as it is written: "::1:44121" as "[::1]:44121" (the port
// typed kept), "fe80::1" (all of it an address) as "[fe80::1]:20880", and
// both readings when s is either ("::1:8080": "[::1]:8080 or [::1:8080]:20880").
// Anything else reads "[::1]:20880".
func bracketed(s string) string {
	whole := net.ParseIP(s) != nil
	var withPort string
	if i := strings.LastIndexByte(s, ':'); i > 0 {
		host, port := s[:i], s[i+1:]
		if p, err := strconv.Atoi(port); err == nil && p > 0 && p <= 65535 && strconv.Itoa(p) == port && net.ParseIP(host) != nil {
			withPort = "[" + host + "]:" + port
		}
	}
	switch {
	case withPort != "" && whole:
		return withPort + " or [" + s + "]:20880"
	case withPort != "":
		return withPort
	case whole:
		return "[" + s + "]:20880"
	}
	return "[::1]:20880"
}

// String returns the canonical form: parameters sorted by key, each part
// percent-encoded once. The zero URL renders as "".
func (u URL) String() string {
	if u.scheme == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString(u.scheme)
	b.WriteString("://")
	if u.user != "" {
		b.WriteString(url.QueryEscape(u.user))
		if u.password != "" {
			b.WriteByte(':')
			b.WriteString(url.QueryEscape(u.password))
		}
		b.WriteByte('@')
	}
	for i, h := range u.hosts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(h.String())
	}
	if u.path != "" {
		b.WriteByte('/')
		segs := strings.Split(u.path, "/")
		for i, s := range segs {
			if i > 0 {
				b.WriteByte('/')
			}
			b.WriteString(url.PathEscape(s))
		}
	}
	for i, k := range u.Keys() {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(k))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(u.params[k]))
	}
	return b.String()
}

// Redacted returns String with its secrets replaced by "***": the value
// of the token key (the token filter's shared secret) and of a method's
// token key (Echo.token), and the password of the userinfo (a ZooKeeper
// digest ACL). It is for logs and messages, not for parsing back: "***"
// is written as is. File paths (tls.key) are not secrets and are kept.
func (u URL) Redacted() string {
	hidden := u
	if hidden.password != "" {
		hidden.password = "\x00"
	}
	var secret []string
	for k, v := range u.params {
		if v != "" && IsSecretKey(k) {
			secret = append(secret, k)
		}
	}
	if len(secret) > 0 {
		hidden.params = maps.Clone(u.params)
		for _, k := range secret {
			hidden.params[k] = "\x00"
		}
	}
	return strings.ReplaceAll(hidden.String(), url.QueryEscape("\x00"), "***")
}

// IsSecretKey reports whether URL key k holds a secret that logs and
// messages must not show (Redacted): "token" and a method's "M.token",
// and likewise every key marked with MarkSecretKey (an extension's
// KeyDoc with Secret, once registered).
func IsSecretKey(k string) bool {
	return k == AttachmentToken || strings.HasSuffix(k, "."+AttachmentToken) || isMarkedSecret(k)
}

// IsZero reports whether u is the zero URL.
func (u URL) IsZero() bool { return u.scheme == "" }

// Equal reports whether u and v have the same parts and parameters.
func (u URL) Equal(v URL) bool {
	if u.scheme != v.scheme || u.user != v.user || u.password != v.password ||
		u.path != v.path || len(u.params) != len(v.params) || !slices.Equal(u.hosts, v.hosts) {
		return false
	}
	for k, x := range u.params {
		if y, ok := v.params[k]; !ok || x != y {
			return false
		}
	}
	return true
}

// Scheme returns the scheme in lower case ("airnode", "zookeeper", "file", ...).
func (u URL) Scheme() string { return u.scheme }

// User returns the user of the userinfo part, or "".
func (u URL) User() string { return u.user }

// Password returns the password of the userinfo part, or "".
func (u URL) Password() string { return u.password }

// Host returns the first host ("::1" for "[::1]:20880").
func (u URL) Host() string {
	if len(u.hosts) == 0 {
		return ""
	}
	return u.hosts[0].Host
}

// Port returns the first host's port, 0 when none was given.
func (u URL) Port() int {
	if len(u.hosts) == 0 {
		return 0
	}
	return u.hosts[0].Port
}

// Address returns the first host as a dialable "host:port" ("[::1]:20880").
func (u URL) Address() string {
	if len(u.hosts) == 0 {
		return ""
	}
	return net.JoinHostPort(u.hosts[0].Host, strconv.Itoa(u.hosts[0].Port))
}

// Hosts returns a copy of the hosts written in the authority part.
func (u URL) Hosts() []HostPort { return slices.Clone(u.hosts) }

// Addresses returns every "host:port" of the URL: the authority's hosts, then
// those of the backup parameter, in order, without duplicates.
func (u URL) Addresses() []string {
	var out []string
	seen := map[string]bool{}
	u.eachAddress(func(a string) {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	})
	return out
}

// RepeatedAddresses returns each "host:port" the URL lists more than once,
// in its authority and backup parameter together, in the order of its
// first listing; nil when there is none. Addresses keeps one of each, so
// a hand-written list naming a provider twice has one provider fewer
// than it seems to: the kernel warns of each (Refer).
func (u URL) RepeatedAddresses() []string {
	var out []string
	n := map[string]int{}
	u.eachAddress(func(a string) {
		if n[a]++; n[a] == 2 {
			out = append(out, a)
		}
	})
	return out
}

// eachAddress calls f with every "host:port" of the URL, duplicates
// included: the authority's hosts, then the well-formed entries of the
// backup parameter.
func (u URL) eachAddress(f func(a string)) {
	for _, h := range u.hosts {
		f(net.JoinHostPort(h.Host, strconv.Itoa(h.Port)))
	}
	if b := u.params[KeyBackup]; b != "" {
		for _, s := range strings.Split(b, ",") {
			if h, err := parseHostPort(strings.TrimSpace(s)); err == nil && h.Host != "" {
				f(net.JoinHostPort(h.Host, strconv.Itoa(h.Port)))
			}
		}
	}
}

// CheckBackup returns an error naming the first entry of the "backup"
// parameter that is not host:port (Addresses skips such entries), or nil.
// Registries that read backup addresses call it in Build, so that a typo
// ("backup=h2:2l81") is refused instead of silently leaving a server out.
func (u URL) CheckBackup() error {
	b, ok := u.params[KeyBackup]
	if !ok {
		return nil
	}
	for _, s := range strings.Split(b, ",") {
		s = strings.TrimSpace(s)
		if h, err := parseHostPort(s); err != nil || h.Host == "" {
			return fmt.Errorf("URL key %q: %q is not host:port (want backup=h2:2181,h3:2181)", KeyBackup, s)
		}
	}
	return nil
}

// Path returns the decoded path without its leading "/" ("demo.Echo").
// A registry whose URL names a directory or a file gets it relative too:
// "acme.reg:///tmp/x" has Path "tmp/x" (and no host); use "/"+u.Path() for
// the absolute path, as the file registry does, or the directory would be
// taken relative to each process's working directory. "acme.reg://tmp/x"
// is another URL: host "tmp", Path "x".
func (u URL) Path() string { return u.path }

// Interface returns the service interface name: the "interface" parameter
// when set, else the path.
func (u URL) Interface() string {
	if v := u.params[KeyInterface]; v != "" {
		return v
	}
	return u.path
}

// ServiceKey returns Dubbo's service key "group/interface:version", leaving
// out an empty group or version ("demo.Echo", "g/demo.Echo:1.0").
func (u URL) ServiceKey() string {
	return ServiceKey(u.params[KeyGroup], u.Interface(), u.params[KeyVersion])
}

// CheckInterface reports whether name can be a provider's service
// interface: a service key ("group/interface:version") must give it back,
// so it is not empty and holds no '/' or ':' (the key's separators), no
// ',' or '*' (a reference's group and version lists), no '?', '#', '&',
// '=' or '%' (a URL's syntax), no space and no control character. The
// error names the first character refused and what is allowed; Dubbo's
// interfaces (Java class names, "org.acme.Hello$Inner") and Go's
// ("demo.Echo") pass.
func CheckInterface(name string) error {
	if name == "" {
		return errors.New("service interface is empty")
	}
	for i, r := range name {
		if strings.ContainsRune("/:,*?#&=%", r) || r <= ' ' || r == 0x7f || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fmt.Errorf("service interface %q: character %q at byte %d is not allowed (a service key group/interface:version could not name it: use letters, digits, '.', '_', '-' or '$', as in demo.Echo)", name, r, i)
		}
	}
	return nil
}

// ServiceKey joins group, interface and version as "group/interface:version".
func ServiceKey(group, iface, version string) string {
	k := iface
	if group != "" {
		k = group + "/" + k
	}
	if version != "" {
		k += ":" + version
	}
	return k
}

// Param returns the raw value of key and whether it is present ("key=" is
// present with value "").
func (u URL) Param(key string) (string, bool) {
	v, ok := u.params[key]
	return v, ok
}

// ParamOr returns the value of key, or def when key is absent.
func (u URL) ParamOr(key, def string) string {
	if v, ok := u.params[key]; ok {
		return v
	}
	return def
}

// Params returns a copy of all parameters.
func (u URL) Params() map[string]string {
	m := make(map[string]string, len(u.params))
	for k, v := range u.params {
		m[k] = v
	}
	return m
}

// Keys returns the parameter keys, sorted.
func (u URL) Keys() []string {
	keys := make([]string, 0, len(u.params))
	for k := range u.params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Methods returns the "methods" parameter split on commas.
func (u URL) Methods() []string {
	v := u.params[KeyMethods]
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
}

// MethodParam resolves key for method: "methods.<method>.<key>" first, then
// Dubbo's "<method>.<key>" unless the "methods" parameter lists methods and
// not this one (a consumer's direct URL usually has no "methods": the
// method being called is enough), then the service-level key. The returned source is the key that matched
// ("" when absent). Prefixes are exact: "sayHello.timeout" never applies to
// method "say".
func (u URL) MethodParam(method, key string) (value, source string, ok bool) {
	if method != "" {
		k := "methods." + method + "." + key
		if v, ok := u.params[k]; ok {
			return v, k, true
		}
		k = method + "." + key
		if v, ok := u.params[k]; ok && (u.params[KeyMethods] == "" || slices.Contains(u.Methods(), method)) {
			return v, k, true
		}
	}
	if v, ok := u.params[key]; ok {
		return v, key, true
	}
	return "", "", false
}

// MethodsSetting returns the methods for which u holds a method-level form
// of one of keys, in key order, each once: "methods.<m>.<key>" for any m,
// and Dubbo's "<m>.<key>" for m in u's "methods" or, when u lists none (a
// consumer's reference URL usually lists none), for m an exported Go
// method name (upper case first). These are the forms MethodParam reads
// (MergeURL's rule), so an extension that prepares per-method values in
// Build calls MethodParam(m, key) for each m returned. "Key.hash.nodes=1"
// is method Key's; "heartbeat.retries=5" is no method's.
func (u URL) MethodsSetting(keys ...string) []string {
	var out []string
	methods := u.Methods()
	for _, k := range u.Keys() {
		m, key, ok := methodLevelKey(k, methods)
		if ok && slices.Contains(keys, key) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// MethodLevelKey splits URL key k into the method and the key it sets
// when k is a method-level form of a key on a URL whose "methods" lists
// methods (nil: none listed): "methods.<m>.<key>" for any m, and Dubbo's
// "<m>.<key>" for m in methods or, when methods is empty, for m an
// exported Go method name (upper case first), the rule of MethodsSetting
// and MergeURL. ok is false, method and key "", for any other key:
// "timeout", "heartbeat.retries" and "connect.timeout" are no method's. For checks
// that walk a URL's keys once (u.Methods() computed once).
func MethodLevelKey(k string, methods []string) (method, key string, ok bool) {
	if method, key, ok = methodLevelKey(k, methods); !ok {
		return "", "", false
	}
	return method, key, true
}

// ParamError reports a parameter whose value is present but malformed.
type ParamError struct {
	Key   string // the key as written, e.g. "methods.Echo.timeout"
	Value string // the value as written
	Want  string // what is allowed, e.g. "a duration such as 1.5s, 200ms or 3000 (ms)"
}

// Error returns `invalid value "<Value>" for URL key "<Key>": want <Want>`.
func (e *ParamError) Error() string {
	return fmt.Sprintf("invalid value %q for URL key %q: want %s", e.Value, e.Key, e.Want)
}

// KeyError refuses URL keys for what they are rather than for their
// value's form: an unknown key (a registry's "zookeeper registry: unknown
// URL key ..."), a key setting something for a method the service lacks,
// two keys giving one setting different values, or a value of the right
// form that the extension refuses in its own words (a registry's
// "session.timeout=30ms out of range 400ms..1h0m0s"). Keys are the keys as
// written and Values their values as written, index by index (the same
// length); Msg is the whole refusal, naming the keys and what is allowed.
// A command line that gave one of Keys with its value names where it did,
// as for a *ParamError.
type KeyError struct {
	Keys   []string // the refused keys as written: "session.timeout", "methods.Ech.timeout"
	Values []string // Keys' values as written, index by index ("" for an empty one)
	Msg    string   // the whole refusal, what Error returns: the keys and what is allowed
}

// Error returns Msg.
func (e *KeyError) Error() string { return e.Msg }

// Int returns key as a base-10 int64, def when absent, and a *ParamError
// when present but not an integer.
func (u URL) Int(key string, def int64) (int64, error) { return u.MethodInt("", key, def) }

// MethodInt is Int resolved with MethodParam's precedence.
func (u URL) MethodInt(method, key string, def int64) (int64, error) {
	v, src, ok := u.MethodParam(method, key)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return def, &ParamError{Key: src, Value: v, Want: "an integer"}
	}
	return n, nil
}

// IntRangeWant is a *ParamError's Want for an integer key bounded to
// [min, max]: "an integer from 0 to 100", or, with what min means,
// "an integer from 0 (no limit) to 1048576" (minMeans "no limit"; ""
// for none). Every check of such a key gives this one text whatever the
// bad value (not an integer, below min, above max), so that a key's
// message states its whole range (MethodIntIn, kernel/config).
func IntRangeWant(min, max int64, minMeans string) string {
	if minMeans != "" {
		return fmt.Sprintf("an integer from %d (%s) to %d", min, minMeans, max)
	}
	return fmt.Sprintf("an integer from %d to %d", min, max)
}

// MethodIntIn is MethodInt for a key bounded to [min, max]: def when
// absent, the value when it is an integer in [min, max], else a
// *ParamError naming the key as written, the value, and
// IntRangeWant(min, max, minMeans).
func (u URL) MethodIntIn(method, key string, def, min, max int64, minMeans string) (int64, error) {
	v, src, ok := u.MethodParam(method, key)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < min || n > max {
		return def, &ParamError{Key: src, Value: v, Want: IntRangeWant(min, max, minMeans)}
	}
	return n, nil
}

// Bool returns key as a bool ("true", "false", "1", "0", ...), def when absent.
func (u URL) Bool(key string, def bool) (bool, error) { return u.MethodBool("", key, def) }

// MethodBool is Bool resolved with MethodParam's precedence.
func (u URL) MethodBool(method, key string, def bool) (bool, error) {
	v, src, ok := u.MethodParam(method, key)
	if !ok {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, &ParamError{Key: src, Value: v, Want: "true or false"}
	}
	return b, nil
}

// Duration returns key as a duration, def when absent. Go syntax ("1.5s",
// "200ms") and a bare integer meaning milliseconds (Dubbo's "timeout=3000")
// are accepted; a negative or malformed value is a *ParamError.
func (u URL) Duration(key string, def time.Duration) (time.Duration, error) {
	return u.MethodDuration("", key, def)
}

// MethodDuration is Duration resolved with MethodParam's precedence.
func (u URL) MethodDuration(method, key string, def time.Duration) (time.Duration, error) {
	v, src, ok := u.MethodParam(method, key)
	if !ok {
		return def, nil
	}
	d, err := ParseDuration(v)
	if err != nil {
		return def, &ParamError{Key: src, Value: v, Want: DurationWant(err)}
	}
	return d, nil
}

// Errors of ParseDuration, matched with errors.Is.
var (
	// ErrDurationNegative: a negative number or duration ("-5", "-1s").
	ErrDurationNegative = errors.New("negative duration")
	// ErrDurationTooLarge: beyond MaxDurationMillis milliseconds
	// (time.Duration's range, about 292 years).
	ErrDurationTooLarge = errors.New("duration too large")
	// ErrDurationUnitCase: a unit not in lower case ("5S", "2MS"); the
	// error's text gives the value in lower case, and DurationWant says
	// units are lower case.
	ErrDurationUnitCase = errors.New("duration unit not in lower case")
)

// unitCaseError is ParseDuration's ErrDurationUnitCase for a value whose
// lower-case form, lower, is a duration.
type unitCaseError struct{ lower string }

func (e *unitCaseError) Error() string        { return ErrDurationUnitCase.Error() + ": " + e.lower }
func (e *unitCaseError) Is(target error) bool { return target == ErrDurationUnitCase }

// MaxDurationMillis is the largest bare number of milliseconds
// ParseDuration takes: time.Duration's maximum, about 292 years.
const MaxDurationMillis = int64(1<<63-1) / int64(time.Millisecond)

// DurationWant says what a URL duration allows, after ParseDuration's
// error err, for a *ParamError's Want: "a positive duration ..." for
// ErrDurationNegative, "a duration of at most 9223372036854 ms ..." for
// ErrDurationTooLarge, else "a duration such as 1.5s, 200ms or 3000
// (milliseconds)".
func DurationWant(err error) string {
	return durationWant(err, "1.5s, 200ms or 3000 (milliseconds)", "%d (milliseconds)")
}

// DurationWantWithUnit is DurationWant for a file that refuses bare
// milliseconds (plugins.yaml): its examples all carry a unit.
func DurationWantWithUnit(err error) string { return durationWant(err, "1.5s or 200ms", "%dms") }

func durationWant(err error, examples, maxForm string) string {
	var uc *unitCaseError
	switch {
	case errors.As(err, &uc):
		return "a duration with its unit in lower case, such as " + uc.lower + " (units are lower case: ns, us, ms, s, m, h)"
	case errors.Is(err, ErrDurationNegative):
		return "a positive duration such as " + examples + ", not a negative one"
	case errors.Is(err, ErrDurationTooLarge):
		return "a duration of at most " + fmt.Sprintf(maxForm, MaxDurationMillis) + ", about 292 years: this one is too large"
	}
	return "a duration such as " + examples
}

// BareMillis returns, when v is a bare positive integer (a duration in
// milliseconds to ParseDuration, Dubbo's habit), the note "5 is 5ms (a
// bare number is milliseconds, as in Dubbo); write 5s for seconds"; else
// "". It is the one wording of the kernel's warning of a small bare
// number (timeout=5) and of an extension's error for a duration below its
// range (session.timeout=4).
func BareMillis(v string) string {
	v = strings.TrimSpace(v)
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms <= 0 {
		return ""
	}
	return fmt.Sprintf("%s is %dms (a bare number is milliseconds, as in Dubbo); write %ss for seconds", v, ms, v)
}

// BareMillisFloor and BareMillisCeil bound BareMillisBelow: a bare number
// under 50 is warned of for every duration (timeout=5), one of 1000 or
// more for none (3000 is how Dubbo writes 3 s).
const (
	BareMillisFloor = 50
	BareMillisCeil  = 1000
)

// BareMillisBelow returns the bound under which a bare number given for a
// duration whose default is def ("1s", "60s"; "", "0s" or no duration
// for none) is more likely meant as seconds: a twentieth of def in
// milliseconds, at least BareMillisFloor and at most BareMillisCeil.
// timeout (1s) gets 50, connect.timeout (3s) 150, shutdown.timeout (10s)
// 500, heartbeat.interval (60s) and warmup (10m) 1000, a setting without
// a default 50.
func BareMillisBelow(def string) int64 {
	d, err := ParseDuration(def)
	if err != nil {
		return BareMillisFloor
	}
	return min(max(d.Milliseconds()/20, BareMillisFloor), BareMillisCeil)
}

// BareMillisWarning returns BareMillis(v) when v is a bare number from 1
// to BareMillisBelow(def)-1 for a duration whose default is def; else "".
// It is the one check of every warning of a bare duration: the kernel's
// of a URL key (warmup=600, def "10m"), a command's of a flag (bench
// --duration 30) and of an AIRNODE_* variable.
func BareMillisWarning(v, def string) string {
	ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || ms <= 0 || ms >= BareMillisBelow(def) {
		return ""
	}
	return BareMillis(v)
}

// BareMillisTail returns, for an extension's "out of range" error of the
// duration d read from key of u, ": " and BareMillis of the value when d
// is below min and the value is a bare number ("session.timeout=4ms out
// of range 400ms..1h0m0s: 4 is 4ms (a bare number is milliseconds, as in
// Dubbo); write 4s for seconds"); else "".
func BareMillisTail(u URL, key string, d, min time.Duration) string {
	v, ok := u.Param(key)
	if !ok || d >= min {
		return ""
	}
	if note := BareMillis(v); note != "" {
		return ": " + note
	}
	return ""
}

// ParseDuration parses Go duration syntax or a bare integer of milliseconds.
// Negative durations are rejected (ErrDurationNegative), and so are bare
// numbers over MaxDurationMillis and Go durations over time.Duration's
// range (ErrDurationTooLarge). A unit not in lower case ("5S", "2MS") is
// ErrDurationUnitCase, whose text and DurationWant give the lower-case
// form ("5s").
func ParseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case err == nil && n < 0, errors.Is(err, strconv.ErrRange) && strings.HasPrefix(v, "-"):
		return 0, ErrDurationNegative
	case err == nil && n > MaxDurationMillis, errors.Is(err, strconv.ErrRange):
		return 0, ErrDurationTooLarge
	case err == nil:
		return time.Duration(n) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		if body, neg := strings.CutPrefix(v, "-"); goDurationSyntax(body) {
			// the syntax is right: time refuses it for its size
			if neg {
				return 0, ErrDurationNegative
			}
			return 0, ErrDurationTooLarge
		}
		if low := strings.ToLower(v); low != v {
			if _, lerr := time.ParseDuration(low); lerr == nil {
				return 0, &unitCaseError{lower: low}
			}
		}
		return 0, err
	}
	if d < 0 {
		return 0, ErrDurationNegative
	}
	return d, nil
}

// goDurationSyntax reports whether v is written as Go durations are
// (numbers with units, "1h30m", "1.5s"), whatever its size.
func goDurationSyntax(v string) bool {
	v = strings.TrimPrefix(v, "+")
	if v == "" {
		return false
	}
	for v != "" {
		i := 0
		for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
			i++
		}
		if i == 0 {
			return false
		}
		v = v[i:]
		j := 0
		for j < len(v) && !(v[j] >= '0' && v[j] <= '9' || v[j] == '.') {
			j++
		}
		switch v[:j] {
		case "ns", "us", "µs", "μs", "ms", "s", "m", "h":
		default:
			return false
		}
		v = v[j:]
	}
	return true
}

// Size returns key as a byte count, def when absent. A bare integer is bytes;
// suffixes KiB, MiB, GiB (powers of 1024) and KB, MB, GB (powers of 1000) are
// accepted ("8MiB").
func (u URL) Size(key string, def int64) (int64, error) {
	v, ok := u.params[key]
	if !ok {
		return def, nil
	}
	n, err := ParseSize(v)
	if err != nil {
		return def, &ParamError{Key: key, Value: v, Want: "a byte size such as 8388608, 64KiB or 8MiB"}
	}
	return n, nil
}

// ParseSize parses a non-negative byte size: digits with an optional unit
// (B, KB, MB, GB, KiB, MiB, GiB).
func ParseSize(v string) (int64, error) {
	v = strings.TrimSpace(v)
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, errors.New("no digits")
	}
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if err != nil {
		return 0, err
	}
	mult := map[string]int64{"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
	m, ok := mult[strings.TrimSpace(v[i:])]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q", v[i:])
	}
	if n > (1<<63-1)/m {
		return 0, errors.New("out of range")
	}
	return n * m, nil
}

// With returns a copy of u with key set to value.
func (u URL) With(key, value string) URL {
	p := make(map[string]string, len(u.params)+1)
	for k, v := range u.params {
		p[k] = v
	}
	p[key] = value
	u.params = p
	return u
}

// WithParams returns a copy of u with every entry of params set.
func (u URL) WithParams(params map[string]string) URL {
	if len(params) == 0 {
		return u
	}
	p := make(map[string]string, len(u.params)+len(params))
	for k, v := range u.params {
		p[k] = v
	}
	for k, v := range params {
		p[k] = v
	}
	u.params = p
	return u
}

// Without returns a copy of u without the given keys.
func (u URL) Without(keys ...string) URL {
	p := make(map[string]string, len(u.params))
	for k, v := range u.params {
		p[k] = v
	}
	for _, k := range keys {
		delete(p, k)
	}
	if len(p) == 0 {
		p = nil
	}
	u.params = p
	return u
}

// WithScheme returns a copy of u with another scheme, in lower case.
func (u URL) WithScheme(scheme string) URL { u.scheme = strings.ToLower(scheme); return u }

// WithPath returns a copy of u with another path (a leading "/" is dropped).
func (u URL) WithPath(path string) URL { u.path = strings.TrimPrefix(path, "/"); return u }

// WithAddress returns a copy of u whose only host is host:port.
func (u URL) WithAddress(host string, port int) URL {
	u.hosts = []HostPort{{Host: host, Port: port}}
	return u
}

// SplitHosts returns one URL per authority host, each with that host alone
// and the same scheme, path and parameters (used by the direct registry).
func (u URL) SplitHosts() []URL {
	out := make([]URL, 0, len(u.hosts))
	for _, h := range u.hosts {
		out = append(out, u.WithAddress(h.Host, h.Port))
	}
	return out
}
