package cli

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// A URL key's value that the command line gave (-p, a flag that sets a
// key such as --codec or --transport, the query of SERVICE_URL, ADDR or
// list --explain's URL) and that the kernel or a catalog refuses (an
// unknown extension name, a malformed or out-of-bounds value) is a usage
// error (exit 2), named by where it was given, the same way by every
// command:
//
//	call: -p loadbalance=roundrobn: service demo.Echo: unknown loadbalance "roundrobn" (available: ...); did you mean "roundrobin"?
//
// The same value from plugins.yaml, an AIRNODE_* variable or a registry
// is a failure of the command (exit 1): the command line was right.

// givenKey is where the command line gave a URL key, and its value.
type givenKey struct {
	by    string // as typed: "-p loadbalance=roundrobn", "--codec jsn", "SERVICE_URL key timeout=abc"
	value string // the key's value as given: "roundrobn"
}

// envKeySource is a command's kernel.KeySource: the variable that set a
// key of cfg (config.Config.EnvSource), so that the kernel's warning of
// AIRNODE_CONSUMER_TIMEOUT=5 names it; "" for a key the command line gave
// (given: call's, bench's and list's givenKey, serve's flag as typed),
// which wins over the variable and is the user's as the URL holds it,
// even when the variable holds the same value.
func envKeySource[V any](cfg config.Config, given map[string]V) kernel.KeySource {
	return func(side spi.Side, key, value string) string {
		if _, ok := given[key]; ok {
			return ""
		}
		return cfg.EnvSource(side, key, value)
	}
}

// commandLineKeys maps each URL key that the command line of a consumer
// command sets to where it was given: raw are the -p arguments as typed
// (parseParams accepted them), flags the dedicated flags' keys, and
// query the keys of the URL argument named arg ("SERVICE_URL", "ADDR";
// query nil: none). A key given twice with the same value (consumerURL
// refuses two values) is named by -p, then the flag, then the argument.
func commandLineKeys(raw []string, flags []flagParam, arg string, query map[string]string) map[string]givenKey {
	m := make(map[string]givenKey, len(raw)+len(flags)+len(query))
	for _, kv := range raw {
		k, v, _ := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); k != "" {
			m[k] = givenKey{by: typedParam(kv), value: v}
		}
	}
	for _, f := range flags {
		if _, ok := m[f.key]; !ok {
			m[f.key] = givenKey{by: f.flag + " " + f.arg, value: f.value}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(query)) {
		if _, ok := m[k]; !ok {
			m[k] = givenKey{by: fmt.Sprintf("%s key %s=%s", arg, k, shownValue(query[k])), value: query[k]}
		}
	}
	return m
}

// typedParam is -p kv as an error names it: "-p loadbalance=roundrobn";
// an empty value is shown as two single quotes, as a shell takes it
// (shownValue), so that the line reads as typed and the redaction of a
// secret key's value (redact.go) does not take the ":" after it for the
// secret.
func typedParam(kv string) string {
	k, v, _ := strings.Cut(kv, "=")
	return "-p " + k + "=" + shownValue(v)
}

// shownValue is v, or two single quotes when v is empty (typedParam).
func shownValue(v string) string {
	if v == "" {
		return "''"
	}
	return v
}

// argQuery returns the keys of the query of raw, a SERVICE_URL as
// parseServiceKey reads it, or nil when it does not parse.
func argQuery(raw string) map[string]string {
	u, err := parseServiceKey(raw)
	if err != nil {
		return nil
	}
	return u.Params()
}

// givenBy returns where the command line gave the URL key that err (one
// error, not a join) refuses: the key of an *spi.ParamError, those of an
// *spi.KeyError (each given, comma-separated), or the point
// of an *extension.UnknownError (also in a method-level form ending in
// ".<point>": methods.Echo.loadbalance), when given holds it with the
// value err names. ok is false when err refuses no key or another value
// (a key that plugins.yaml set per method, say). A refused scheme
// (kernel.ErrUnknownProtocol: "dubbo://...") is always the command
// line's (the configuration's reference keeps the scheme given,
// config.Config.ApplyReference): by "", ok true.
func givenBy(given map[string]givenKey, err error) (string, bool) {
	if errors.Is(err, kernel.ErrUnknownProtocol) {
		return "", true
	}
	match := func(k string, value func(string) bool) (string, bool) {
		g, ok := given[k]
		if !ok || !value(g.value) {
			return "", false
		}
		return g.by, true
	}
	if pe, ok := errors.AsType[*spi.ParamError](err); ok {
		return match(pe.Key, func(v string) bool { return v == pe.Value })
	}
	if ke, ok := errors.AsType[*spi.KeyError](err); ok { // every key of it the command line gave: "-p heartbeat=3000, -p heartbeat.interval=2000"
		var by []string
		for i, k := range ke.Keys {
			if b, ok := match(k, func(v string) bool { return i < len(ke.Values) && v == ke.Values[i] }); ok {
				by = append(by, b)
			}
		}
		return strings.Join(by, ", "), len(by) > 0
	}
	ue, ok := errors.AsType[*extension.UnknownError](err)
	if !ok {
		return "", false
	}
	names := func(v string) bool { // filter=-a,b names several; heartbeat=-1 names "-1"
		return slices.ContainsFunc(strings.Split(v, ","), func(n string) bool {
			n = strings.TrimSpace(n)
			return n == ue.Name || strings.TrimPrefix(n, "-") == ue.Name
		})
	}
	if by, ok := match(ue.Point, names); ok {
		return by, true
	}
	for _, k := range slices.Sorted(maps.Keys(given)) {
		if strings.HasSuffix(k, "."+ue.Point) {
			if by, ok := match(k, names); ok {
				return by, true
			}
		}
	}
	return "", false
}

// commandLineKeyError returns err, the refusal of a consumer URL by
// kernel.Node.Refer ("kernel: refer demo.Echo: ...", one refusal a line:
// errors.Join), as a usage error naming where the command line gave each
// refused key (givenBy), when every refusal is of such a key:
//
//	-p loadbalance=roundrobn: service demo.Echo: unknown loadbalance "roundrobn" (...)
//	call: -p timeout=abc: service demo.Echo: invalid value "abc" for URL key "timeout": ...
//
// the first line without the command (the command's failure line adds
// "airnode: CMD: "), every further one with it (cmd: "call"). service is
// the reference's service key, which Refer's prefix names. Otherwise
// (nil, or some refusal of a key the command line did not give, or that
// is no key's) it returns nil: the caller reports err as before.
func commandLineKeyError(cmd, service string, given map[string]givenKey, err error) error {
	if err == nil {
		return nil
	}
	var lines []string
	for _, e := range unjoin(err) {
		by, ok := givenBy(given, e)
		if !ok {
			return nil
		}
		line := fmt.Sprintf("service %s: %s", service, referCause(e.Error()))
		if by != "" {
			line = by + ": " + line
		}
		if len(lines) > 0 {
			line = cmd + ": " + line
		}
		lines = append(lines, line)
	}
	return usage(&keyRefusedError{msg: strings.Join(lines, "\n"), err: err})
}

// referCause is msg, a refusal of Refer, without Refer's prefix
// "kernel: refer SERVICE: ", which names the service key or, for a
// malformed group or version, the interface alone.
func referCause(msg string) string {
	if rest, ok := strings.CutPrefix(msg, "kernel: refer "); ok {
		if _, cause, ok := strings.Cut(rest, ": "); ok {
			return cause
		}
	}
	return msg
}

// keyRefusedError is commandLineKeyError's error: its text, unwrapping to
// the refusal (an *spi.ParamError or *extension.UnknownError inside).
type keyRefusedError struct {
	msg string
	err error
}

func (e *keyRefusedError) Error() string { return e.msg }
func (e *keyRefusedError) Unwrap() error { return e.err }
