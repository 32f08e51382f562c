package cli

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/airnode/airnode/kernel"
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
// Errors: an empty interface, a malformed query or URL, a URL whose
// scheme lacks its "//" (schemeWithoutSlashes).
func parseServiceKey(s string) (spi.URL, error) {
	key, query, hasQuery := strings.Cut(s, "?")
	if err := schemeWithoutSlashes(s); err != nil {
		return spi.URL{}, err
	}
	if strings.Contains(key, "://") {
		u, err := spi.Parse(s)
		if err != nil {
			return spi.URL{}, err
		}
		return u, keyInURLPath(s, u)
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

// schemeWithoutSlashes returns an error for SERVICE_URL s that starts
// with a URL scheme and ":" but not "://" (tester104 #1): "airnode:" and
// anything ("airnode:/127.0.0.1:20880/demo.Echo", "airnode:demo.Echo"),
// any scheme followed by "/" ("zookeeper:/127.0.0.1:2181/x"), or by a
// host:port and "/" ("dubbo:127.0.0.1:20880/x"). Read as a service key,
// airnode:/127.0.0.1:20880/demo.Echo was group "airnode:", interface
// "127.0.0.1" and version "20880/demo.Echo", and the call waited and
// failed SERVICE_NOT_FOUND. The error names what was given and the URL
// meant: "did you mean airnode://127.0.0.1:20880/demo.Echo" when an
// address comes first, airnode:///demo.Echo otherwise, the query kept.
// nil for every service key form ("demo.Echo:1.0", "g/demo.Echo:1.0":
// a version is no host:port, and a scheme holds no "/") and for a URL
// with "://".
func schemeWithoutSlashes(s string) error {
	key, query, hasQuery := strings.Cut(s, "?")
	scheme, rest, ok := strings.Cut(key, ":")
	if !ok || strings.HasPrefix(rest, "//") || !isScheme(scheme) {
		return nil
	}
	addr, _, hasPath := strings.Cut(strings.TrimLeft(rest, "/"), "/")
	host, port, err := net.SplitHostPort(addr)
	hostPort := hasPath && err == nil && host != "" && isDigits(port)
	if !strings.EqualFold(scheme, kernel.Protocol) && !strings.HasPrefix(rest, "/") && !hostPort {
		return nil
	}
	meant := scheme + ":///" + strings.TrimLeft(rest, "/")
	if hostPort || hasPath && (net.ParseIP(strings.Trim(addr, "[]")) != nil || addr == "localhost") {
		meant = scheme + "://" + strings.TrimLeft(rest, "/")
	}
	if hasQuery {
		meant += "?" + query
	}
	return fmt.Errorf("service URL %q: %q is not followed by \"//\": a URL is %s://host:port/interface for a direct call, or %s:///interface through the registry; did you mean %s", s, scheme+":", kernel.Protocol, kernel.Protocol, meant)
}

// isScheme reports whether s reads as a URL scheme (RFC 3986): a letter,
// then letters, digits, "+", "-" and ".".
func isScheme(s string) bool {
	return s != "" && (s[0]|0x20 >= 'a' && s[0]|0x20 <= 'z') &&
		strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.") == ""
}

// keyInURLPath returns an error for URL u (SERVICE_URL s) whose path
// holds a "/" or ":": a service key's separators, as in
// airnode:///g/demo.Echo:1.0. A URL's path is the interface alone
// (DESIGN §3: group and version are the URL's keys), and taken whole it
// named an interface no provider can export (spi.CheckInterface), so the
// call waited and failed SERVICE_NOT_FOUND. The error names what was
// given and, when the path reads as group/interface:version, the same URL
// with group= and version= as keys, and for a URL without a host the
// service key form too. nil for a path without "/" or ":".
func keyInURLPath(s string, u spi.URL) error {
	path := u.Path()
	if !strings.ContainsAny(path, "/:") {
		return nil
	}
	msg := fmt.Sprintf("service URL %q: path %q is not an interface: a URL's path is the interface alone, its group and version are keys (airnode://HOST:PORT/demo.Echo?group=g&version=1.0)", s, path)
	params := map[string]string{}
	iface := path
	if g, rest, ok := strings.Cut(iface, "/"); ok {
		params[spi.KeyGroup], iface = g, rest
	}
	if i, v, ok := strings.Cut(iface, ":"); ok {
		iface, params[spi.KeyVersion] = i, v
	}
	for k, v := range params {
		if q, ok := u.Param(k); v == "" || ok && q != v {
			return errors.New(msg)
		}
	}
	if spi.CheckInterface(iface) != nil {
		return errors.New(msg)
	}
	meant := u.WithPath(iface).WithParams(params)
	msg += fmt.Sprintf("; did you mean %s", meant)
	if u.Host() == "" && len(u.Params()) == 0 {
		msg += fmt.Sprintf(" (or the service key %s)", meant.ServiceKey())
	}
	return errors.New(msg)
}

// isDigits reports whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// serviceURLForms lists the SERVICE_URL forms call and bench accept, for
// the error of one that holds the method too (methodInServiceURL), and
// where command cmd ("call", "bench") takes the method instead: call's
// next argument, bench's --method.
func serviceURLForms(cmd string) string {
	forms := `SERVICE_URL is a service key, [group/]interface[:version][?key=value&...] ("demo.Echo", "g/demo.Echo:1.0", "demo.Echo?group=g&version=1.0"), airnode:///demo.Echo, or airnode://host:port/demo.Echo for a direct call`
	if cmd == "bench" {
		return forms + `; the method is given by --method: airnode bench --method Echo demo.Echo`
	}
	return forms + `; the method is the next argument: airnode call demo.Echo Echo '"hi"'`
}

// methodApart is how command cmd ("call", "bench") takes method m of
// service svc, for the errors and hints that name it: "call demo.Echo
// Echo ...", "bench --method Echo demo.Echo".
func methodApart(cmd, svc, m string) string {
	if cmd == "bench" {
		return "bench --method " + m + " " + svc
	}
	return "call " + svc + " " + m + " ..."
}

// methodInServiceURL returns a usage error for a SERVICE_URL arg of
// command cmd ("call" or "bench": both check with it, before they refer)
// that holds a method after the service, in a spelling of another tool
// (tester85 #11), naming the service and the method it reads, how cmd
// takes the method (methodApart) and the accepted forms
// (serviceURLForms): "demo.Echo#Echo" (a fragment, which no airnode URL
// has), "demo.Echo/Echo" (gRPC's /package.Service/Method; read as group
// "demo.Echo" of an interface "Echo", it waited for providers and failed
// SERVICE_NOT_FOUND) and airnode://host:port/demo.Echo/Echo. The "/"
// forms are refused only when the part before the "/" looks like an
// interface (holds a ".") and the part after like a method (no ".",
// upper case first), so that a group such as "g" or "dev" keeps its
// meaning. A URL with no interface after its address
// (airnode://127.0.0.1:20880) is refused the same way, with the forms.
// nil for a URL missing its "//" (schemeWithoutSlashes: parseServiceKey
// names the URL meant) and for any other arg; demo.Echo.Echo, which a Java-style
// interface name may be, is left to call's SERVICE_NOT_FOUND
// (methodHint).
func methodInServiceURL(cmd, arg string) error {
	if schemeWithoutSlashes(arg) != nil {
		return nil // parseServiceKey's to explain, with the URL meant
	}
	key, _, _ := strings.Cut(arg, "?")
	if svc, m, ok := strings.Cut(key, "#"); ok {
		if i := strings.LastIndex(svc, "/"); i >= 0 && strings.Contains(svc, "://") {
			svc = svc[i+1:]
		}
		return fmt.Errorf("SERVICE_URL %q: %q after \"#\" reads as a method: a method is not part of SERVICE_URL (%s); %s", arg, m, methodApart(cmd, svc, m), serviceURLForms(cmd))
	}
	path := key
	if _, rest, ok := strings.Cut(key, "://"); ok {
		_, path, _ = strings.Cut(rest, "/")
		if strings.Trim(path, "/") == "" { // airnode://127.0.0.1:20880: the kernel's "no service interface" named a connect.timeout the user never gave (tester93)
			return fmt.Errorf("SERVICE_URL %q names no service interface after the address: %s", arg, serviceURLForms(cmd))
		}
	}
	i := strings.LastIndex(path, "/")
	if i < 0 {
		return nil
	}
	svc, m := path[:i], path[i+1:]
	if j := strings.LastIndex(svc, "/"); j >= 0 {
		svc = svc[j+1:]
	}
	if m, _, _ = strings.Cut(m, ":"); !strings.Contains(svc, ".") || !looksLikeMethod(m) {
		return nil
	}
	return fmt.Errorf("SERVICE_URL %q: %q after \"/\" reads as a method of %s (gRPC's /Service/Method form): a method is not part of SERVICE_URL (%s); in a service key the part before \"/\" is the group; %s", arg, m, svc, methodApart(cmd, svc, m), serviceURLForms(cmd))
}

// looksLikeMethod reports whether s reads as a Go method name: no ".",
// an upper-case letter first.
func looksLikeMethod(s string) bool {
	return s != "" && !strings.Contains(s, ".") && s[0] >= 'A' && s[0] <= 'Z'
}

// methodHint returns, for a call of service (a service key) that no
// provider is listed for, a hint when its interface ends in what reads
// as a method after a type ("demo.Echo.Echo": two segments upper case
// first): "; if Echo is the method, give it apart: call demo.Echo Echo
// ..." and the accepted forms; "" otherwise ("com.acme.EchoService").
func methodHint(service string) string {
	iface := service
	if _, rest, ok := strings.Cut(iface, "/"); ok {
		iface = rest
	}
	iface, _, _ = strings.Cut(iface, ":")
	i := strings.LastIndex(iface, ".")
	if i < 0 {
		return ""
	}
	typ, m := iface[:i], iface[i+1:]
	last := typ[strings.LastIndex(typ, ".")+1:]
	if !looksLikeMethod(m) || !looksLikeMethod(last) {
		return ""
	}
	return fmt.Sprintf("; if %s is the method, give it apart: %s (%s)", m, methodApart("call", typ, m), serviceURLForms("call"))
}

// checkServiceURL returns, as a usage error (exit 2), why arg is not a
// SERVICE_URL of the form call and bench take: a method in it
// (methodInServiceURL), a malformed URL or service key (parseServiceKey:
// an IPv6 host without brackets, a bad escape, an empty interface), and,
// when direct (the URL is to be taken as call takes it, a reference to the
// providers it names), a host without a port or with port 0 (directPorts,
// in call's words: there is no default port); nil for an arg of a valid
// form. list --explain --provider URL passes direct false: its SERVICE_URL
// is then the consumer's URL merged with that provider, and a Dubbo
// consumer:// URL names the consumer's host without a port. Commands that
// take a SERVICE_URL without calling it (list --explain) check it with
// this before they start anything, so that they exit as call does.
func checkServiceURL(arg string, direct bool) error {
	if err := methodInServiceURL("call", arg); err != nil { // explained as call takes it
		return usage(err)
	}
	u, err := parseServiceKey(arg)
	if err != nil {
		return usage(err)
	}
	if direct {
		return directPorts(u, arg)
	}
	return nil
}

// serviceArgsOrder returns why call's first two arguments, svc
// (SERVICE_URL) and method (METHOD), cannot be a service and its method,
// checked before anything is started (tester93 #3): svc's interface is not
// a service name (JSON such as '"hi"', a space: a service name is a
// dotted path of letters, digits, "_", "$" and "-"), or method holds a "."
// while svc's interface holds none (`call Echo demo.Echo`: the two
// swapped, which waited for a provider of "Echo" and failed
// SERVICE_NOT_FOUND). A full URL (with "://", or missing it:
// schemeWithoutSlashes) is left to its parser. nil otherwise.
func serviceArgsOrder(svc, method string) error {
	key, _, _ := strings.Cut(svc, "?")
	if strings.Contains(key, "://") || schemeWithoutSlashes(svc) != nil {
		return nil // a URL: its parser's to explain
	}
	iface := key
	if _, rest, ok := strings.Cut(iface, "/"); ok {
		iface = rest
	}
	iface, _, _ = strings.Cut(iface, ":")
	if iface == "" || strings.ContainsAny(iface, "/%") {
		return nil // parseServiceKey's to explain
	}
	if !serviceName(iface) {
		return fmt.Errorf("SERVICE_URL %s: %s is not a service name: a service name (the interface) is a dotted path of letters, digits, \"_\", \"$\" and \"-\" (\"demo.Echo\", \"com.acme.EchoService\"), and the arguments come after METHOD; %s", quoteArg(svc), quoteArg(iface), serviceURLForms("call"))
	}
	if strings.Contains(method, ".") && !strings.Contains(iface, ".") && serviceName(method) {
		meant := swappedServiceArg(svc, iface, method)
		arg := meant
		if strings.ContainsAny(arg, "?&*") {
			arg = "'" + arg + "'" // the shell's
		}
		return fmt.Errorf("METHOD %q holds a \".\" as a service name does, and SERVICE_URL %q none: did you swap SERVICE and METHOD? did you mean service %q, method %q? (call %s %s ...; %s)",
			method, svc, meant, iface, arg, iface, serviceURLForms("call"))
	}
	return nil
}

// swappedServiceArg is the SERVICE_URL svc, whose interface is iface,
// with method in place of iface: its group, version and query kept
// ("g/Echo:1.0?timeout=2s", "demo.Echo": "g/demo.Echo:1.0?timeout=2s").
func swappedServiceArg(svc, iface, method string) string {
	key, query, hasQuery := strings.Cut(svc, "?")
	group, rest, hasGroup := strings.Cut(key, "/")
	if !hasGroup {
		group, rest = "", key
	}
	meant := method + strings.TrimPrefix(rest, iface)
	if hasGroup {
		meant = group + "/" + meant
	}
	if hasQuery {
		meant += "?" + query
	}
	return meant
}

// serviceName reports whether s reads as a service's interface name: a
// non-empty path of "."-separated non-empty parts of ASCII letters,
// digits, "_", "$" and "-".
func serviceName(s string) bool {
	for part := range strings.SplitSeq(s, ".") {
		if part == "" || strings.Trim(part, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$-") != "" {
			return false
		}
	}
	return true
}
