package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// callFlags are the flags of `airnode call`.
type callFlags struct {
	cfg         config.Config // references: defaults for the service's parameters
	registry    string
	registrySet bool // --registry given (not the configuration's): a direct call says it is not used
	timeout     string
	codec       string
	params      []string
	attachments []string  // -a key=value
	stdin       io.Reader // for an ARG_JSON of @-
	// accessLogger, when --log-level is not given, logs at info: the
	// bundled accesslog filter logs its lines through it when the
	// reference asks for access lines on the log (accesslog=true), which
	// the default warn level would drop; the node's other lines stay at
	// warn
	accessLogger *slog.Logger
	logFormat    string // --log-format: the failure line is a JSON record under json
	// registrySource says where registry came from (app.registrySource)
	registrySource string
	// showAttachments (--show-attachments): the answer's attachments on stderr
	showAttachments bool
	// began is when the command started: a timeout given on the command
	// line (commandLineBound) counts from it, plugins' start included
	began time.Time
}

// commandLineBound returns the timeout of the call that f and args
// (SERVICE_URL, METHOD) make under cfg when --timeout gives it and it
// bounds the whole command (connect.timeout set nowhere): ok is false
// otherwise, and for a command line runCall refuses. The URL key timeout
// (-p timeout=, a method-level form, SERVICE_URL's ?timeout=) is each
// attempt's, as everywhere (tester74 #3, #4): it bounds no command.
func commandLineBound(cfg config.Config, f callFlags, args []string) (time.Duration, bool) {
	if len(args) < 2 || f.timeout == "" {
		return 0, false
	}
	var flags []flagParam
	if f.timeout != "" {
		if checkDuration("--timeout", f.timeout) != nil {
			return 0, false
		}
		flags = append(flags, flagParam{"--timeout", f.timeout, "timeout", f.timeout})
	}
	own, err := parseServiceKey(args[0])
	if err != nil {
		return 0, false
	}
	params, err := parseParams(f.params)
	if err != nil {
		return 0, false
	}
	given := maps.Clone(params)
	maps.Copy(given, own.Params())
	if f.timeout != "" {
		given["timeout"] = f.timeout
	}
	if !overridden(given, args[1], "timeout") {
		return 0, false
	}
	u, err := consumerURL(cfg, args[0], f.params, flags)
	if err != nil {
		return 0, false
	}
	if _, set := u.Param("connect.timeout"); set {
		return 0, false
	}
	bound, err := u.MethodDuration(args[1], "timeout", kernel.DefaultTimeout)
	return bound, err == nil && bound > 0
}

// callCommand returns `airnode call`.
func callCommand(a *app) *cobra.Command {
	var f callFlags
	cmd := &cobra.Command{
		Use:   "call [flags] SERVICE_URL METHOD [ARG_JSON ...]",
		Short: "Call one method of a service and print the result as JSON",
		Long: `call refers to a service, calls METHOD with each ARG_JSON decoded as JSON, and
prints the result as JSON on stdout (exit 0). On failure it prints
"STATUS_NAME: message" on stderr and exits 1; a business error the
method returned (spi.BizError) adds a line with its code and reason and a
"detail KEY=VALUE" line per detail. Interrupted (SIGINT,
SIGTERM), it cancels the call (a request already sent is followed by the
cancel event, written before the connection closes, so the provider's
handler sees the consumer's cancel), says on stderr whether the request
had been sent ("interrupted by SIGINT; the request had been sent to ADDR
and may have run", or "... before the request was sent") and exits 130
(143 for SIGTERM). It logs
at warn unless --log-level is given, so that it prints the result only;
an access line asked for (-p accesslog=true) is logged at info.

SERVICE_URL is airnode://host:port[,host2:port2]/service, a direct call:
no registry is used, not even --registry (a line on stderr says so) or the
configuration's. Or it is a service key alone ("demo.Echo",
"group/demo.Echo:1.0", or airnode:///demo.Echo) found in --registry, else
the configuration's registry, else the "file" registry. A host without a
port is refused. METHOD is its own argument: a SERVICE_URL holding it
(demo.Echo/Echo, gRPC's form; demo.Echo#Echo) is refused at once,
listing these forms; demo.Echo.Echo, which a Java-style interface may
be, fails SERVICE_NOT_FOUND saying to give Echo apart. A service name
that is none (JSON such as '"hi"', a space) and a METHOD holding a "."
after a service without one (call g/Echo:1.0 demo.Echo: "did you swap
SERVICE and METHOD? did you mean service "g/demo.Echo:1.0", method
"Echo"?") are usage errors (exit 2), before anything is started.

Parameters come from SERVICE_URL's query ("demo.Echo?timeout=200"), -p
key=value, and the flags that set a URL key (--timeout, --codec). A key
given two ways must have the same value (a duration in any spelling: 1s,
1000), else call refuses both, naming them: none is ranked above another.
plugins.yaml's references give defaults for the keys none of them sets; a
key set here also beats the reference's method-level forms of it for the
method (flags beat files): with methods.Sleep.timeout: 150ms in the file,
--timeout 2s gives Sleep 2 s, with a warning naming the file's key it
replaces. --timeout is the call's own timeout, as Dubbo's per-call
RpcContext timeout (the kernel's "timeout" attachment): it beats every
URL level, the provider's too, so a provider's serve -p
Sleep.timeout=300ms does not cut call --timeout 2s ... Sleep 500 to 300
ms; a method-level key of the command line (-p methods.Sleep.timeout=)
still decides each attempt of that method. A URL key keeps Dubbo's
order, method before service, then consumer before provider: the
provider's Sleep.timeout beats -p timeout=2s (list --explain shows what
each method gets). --timeout (the call's timeout, default 1s)
bounds connecting and the call with its retries (failover's, with -p
idempotent=true), as health's --timeout and curl's --max-time:
connect.timeout (dial and first ping, 3s by default) is cut to it, the
call's deadline is its end (each retry gets what is left, none starts
after it), and a provider that accepts and never answers (hung,
SIGSTOPped) fails the call CLIENT_TIMEOUT within --timeout ("no provider
answered within --timeout 300ms, connecting included"). A method that
outlasts the default fails SERVER_TIMEOUT saying so ("timeout 1s, the
default; --timeout to change": call demo.Echo Sleep 2000 --timeout 3s
gives Sleep its 2 s). A timeout the
URL sets instead (-p timeout=, SERVICE_URL's ?timeout=, methods.M.timeout
or M.timeout, the configuration's reference) is each attempt's, as in
Dubbo and everywhere else in airnode: with -p timeout=500 -p
idempotent=true a method that hangs is tried 3 times, 500 ms each, and
connect.timeout keeps its own time. A timeout given
with --timeout bounds the whole command from its start: the start of the
configuration's plugins, the waits for the registry and for a provider
to be listed, connecting, the call and its retries; the error says what
was waiting when it ran out ("--timeout 300ms ran out while waiting for
a provider of demo.Nope to be listed"). Set connect.timeout (-p
connect.timeout=3s, the URL, the configuration) to give the first
connection its own time instead, for a short --timeout over a slow link:
call then waits for a provider to connect, up to twice connect.timeout
and 1 s (Dubbo connects at refer), and --timeout bounds the call and its
retries alone. Before connecting, a registry that lists no provider yet
gets 2 s for one to register (as bench's), or what is left of
--timeout: a call made right after starting serve finds
it; after that the call fails SERVICE_NOT_FOUND.

  airnode call airnode://127.0.0.1:20880/demo.Echo Echo '"hello"'
  airnode call demo.Echo Sleep 2000 --timeout 500ms
  airnode call demo.Echo Echo -- -5          # "--" before a negative number
  airnode call demo.Echo Echo @big.json      # the argument read from a file
  produce | airnode call demo.Echo Echo @-   # ... or from standard input

An ARG_JSON of @PATH is read from the file PATH, @- from standard input
(once), as curl's -d @file: for arguments too large for a command line.

ARG_JSON is generic JSON (Dubbo's generic invocation), read into the
parameter's Go type as encoding/json reads it, under every codec: a []byte
is a base64 string ("aGk=" is "hi"), a time.Time an RFC 3339 string
("2026-11-30T07:00:00+01:00"), at any depth, and a map[int]V's keys decimal
strings ({"1":"a"}); call prints results the same way, so what it prints
can be sent back. A value the parameter cannot take is BAD_REQUEST naming
the field, what it wants and what was sent ("argument 0 (main.Order), at
items[0].qty: want an integer, got a string ("3")"). Each argument is its own
ARG_JSON: a method of two parameters is called "Two '{"SKU":"a"}' 1", not
"Two '[{"SKU":"a"},1]'". A msgpack timestamp carries no time zone: a time
result under the default codec prints in this process's zone (the same
instant); --codec json prints the provider's offset.

-a key=value sends an attachment with the call (metadata: a tenant, a user,
a trace id; gRPC's metadata, Dubbo's RpcContext attachments), repeatable;
provider filters and a Go method (spi.IncomingAttachments) read them, and
demo.Echo's Info returns them:

  airnode call demo.Echo Info -a tenant=x -a user=alice

--show-attachments prints the attachments the answer carried (set by the
provider's method with spi.SetResponseAttachments, or by its filters; a
Go caller reads them with spi.ReceiveAttachments) on stderr, one line
each, sorted by key, or "no response attachments" when it carried none:

  attachment cursor=30
  attachment server-timing="db;dur=1"

A key or value holding a space, a quote, a backslash or a control
character (or empty) is quoted as a Go string. Under --log-format json
they are one record, {"msg":"response attachments","attachments":{...}},
the object empty when none. stdout stays the result alone, so a pipe
into jq reads the same with or without the flag. A failed call's answer
may carry attachments too (a reason code): they come before the error
line.

A call is a generic invocation (Dubbo's): it carries the attachment
generic=true, so the provider refuses a JSON key that names no field of a
struct argument, as a typo, with BAD_REQUEST listing the fields and the
nearest ("did you mean"). A typed Go consumer's calls carry no such mark:
there the provider ignores a field its struct lacks (a consumer newer than
the provider). -a generic=false sends the call as a typed consumer would.`,
		Args: argsRange(2, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// the configuration gives the registry (plugins.yaml,
			// AIRNODE_REGISTRY), references and plugins (balancers, filters, ...)
			f.registrySet = cmd.Flags().Changed("registry")
			f.began = time.Now()
			// a --timeout given on the command line bounds the plugins'
			// start too (tester71 #2)
			within := func(cfg config.Config) (time.Time, time.Duration) {
				if bound, ok := commandLineBound(cfg, f, args); ok {
					return f.began.Add(bound), bound
				}
				return time.Time{}, 0
			}
			env, done, err := a.consumerSetupWithin(cmd, &f.registry, within, args[0], f.params)
			if pe, ok := errors.AsType[*pluginStartTimeout](err); ok {
				msg := fmt.Sprintf("call: --timeout %v ran out while starting plugins: %v", pe.bound, pe.err)
				errorLine(a.stderr, a.logFormat, "call", spi.StatusClientTimeout.String()+": "+msg, msg, "status", spi.StatusClientTimeout.String())
				return &callError{err: spi.Errorf(spi.StatusClientTimeout, "%s", msg)}
			}
			if err != nil {
				return err
			}
			defer done()
			f.cfg = env.cfg
			f.stdin = cmd.InOrStdin()
			f.logFormat = a.logFormat
			f.registrySource = a.registrySource(f.registrySet)
			if !cmd.Flags().Changed("log-level") {
				f.accessLogger = a.Logger()
			}
			return runCall(env.ctx, env.cat, f, args, env.logger, a.stdout, a.stderr)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.registry, "registry", "", "registry URL for a SERVICE_URL without host "+registryDefaultHelp+"; not used for host:port")
	fl.Var(durationText{&f.timeout}, "timeout", "how long the command may take, plugins' start, the wait for a provider, connecting and retries included: 500ms, 1.5s, or a bare number of ms (the call's own timeout: it beats every URL level, a provider's methods.M.timeout or M.timeout too; default 1s, which bounds connecting and the call with its retries; also caps connect.timeout unless that is set)")
	fl.StringVar(&f.codec, "codec", "", "codec extension (URL key codec; default msgpack)")
	fl.StringArrayVarP(&f.params, "param", "p", nil, "key=value URL parameter (repeatable; refused when SERVICE_URL, --timeout or --codec sets the key to another value)")
	fl.StringArrayVarP(&f.attachments, "attachment", "a", nil, "key=value attachment sent with the call (repeatable, each key once; the kernel's keys remote and token are refused, and timeout: use --timeout)")
	fl.BoolVar(&f.showAttachments, "show-attachments", false, `print the answer's attachments on stderr, an "attachment KEY=VALUE" line each (a JSON record under --log-format json); stdout stays the result`)
	return cmd
}

// registryRefusal is registryFlagRefusal for --registry when the command
// line gave it.
func (f callFlags) registryRefusal(err error) error {
	if !f.registrySet {
		return nil
	}
	return registryFlagRefusal(f.registry, err)
}

// callError is a failed call already reported on stderr; the command
// exits 1. (A usage error, exit 2, is a usageError, which the root
// reports.)
type callError struct {
	err error
}

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

// ExitCode is the process exit status for a failed call.
func (e *callError) ExitCode() int { return 1 }

// quoteArg quotes an argument for an error message, cut to 60 bytes: an
// argument read from a file can be megabytes.
func quoteArg(s string) string {
	if len(s) > 60 {
		return fmt.Sprintf("%q… (%d bytes)", s[:60], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// quoteHint is the hint for an argument that is not JSON but reads as
// a bare word (A-1, hello): "; a string is quoted JSON: '"A-1"'", the
// shell's single quotes keeping the double ones. Nothing for text that
// starts as an object, array or string, or that a hint could not quote
// in one short line.
func quoteHint(s string) string {
	t := strings.TrimSpace(s)
	if t == "" || len(t) > 60 || strings.ContainsAny(t, "'\"\n{[") {
		return ""
	}
	return fmt.Sprintf("; a string is quoted JSON: '%q'", t)
}

// decodeArg decodes one ARG_JSON; integral numbers become int64, or
// uint64 above the int64 range, so that a provider's int parameter accepts
// 2000; other numbers become float64. An integer that fits in neither
// (below -2^63 or above 2^64-1) is an error, never a rounded float64.
func decodeArg(s string) (any, error) {
	if i := invalidUTF8(s); i >= 0 {
		return nil, fmt.Errorf("argument %s: invalid UTF-8 at byte offset %d (0x%02x): want UTF-8 text (JSON's encoding); bytes go as a base64 string", quoteArg(s), i, s[i])
	}
	if i := loneSurrogate(s); i >= 0 {
		return nil, fmt.Errorf("argument %s: %s at byte offset %d is half of a UTF-16 surrogate pair, which is no character: want a \\uD800-\\uDBFF escape followed by a \\uDC00-\\uDFFF one", quoteArg(s), s[i:i+6], i)
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		if strings.Contains(err.Error(), "exceeded max depth") {
			return nil, fmt.Errorf("argument %s is nested more than %d arrays and objects deep (encoding/json's limit)", quoteArg(s), jsonMaxDepth)
		}
		return nil, fmt.Errorf("argument %s is not JSON: %w%s", quoteArg(s), err, quoteHint(s))
	}
	if d.More() {
		return nil, fmt.Errorf("argument %s: more than one JSON value", quoteArg(s))
	}
	v, err := numbers(v)
	if err != nil {
		return nil, fmt.Errorf("argument %s: %w", quoteArg(s), err)
	}
	return v, nil
}

// numbers replaces every json.Number in v: int64, uint64 or float64.
func numbers(v any) (any, error) {
	var err error
	switch x := v.(type) {
	case json.Number:
		return number(x)
	case []any:
		for i := range x {
			if x[i], err = numbers(x[i]); err != nil {
				return nil, err
			}
		}
	case map[string]any:
		for k := range x {
			if x[k], err = numbers(x[k]); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// number converts one JSON number: an integer literal (no fraction, no
// exponent) to int64, else uint64, else an error; any other to float64.
func number(n json.Number) (any, error) {
	if i, err := n.Int64(); err == nil {
		return i, nil
	}
	if strings.ContainsAny(string(n), ".eE") {
		f, err := n.Float64()
		if err != nil { // strconv.ErrRange: the only error of a valid JSON number
			return nil, fmt.Errorf("number %s is out of range: want at most about 1.8e308 in magnitude (a float64); for a string or any parameter, pass it as a string: '\"%s\"'", n, n)
		}
		return f, nil
	}
	if u, err := strconv.ParseUint(string(n), 10, 64); err == nil {
		return u, nil
	}
	return nil, fmt.Errorf("integer %s does not fit in 64 bits (-9223372036854775808 to 18446744073709551615); for a string or any parameter, pass it as a string: '\"%s\"'", n, n)
}

// jsonable converts generic decoded values into values encoding/json can
// print: maps with non-string keys get string keys.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case map[string]any:
		for k := range x {
			x[k] = jsonable(x[k])
		}
	case []any:
		for i := range x {
			x[i] = jsonable(x[i])
		}
	}
	return v
}

// runCall refers to args[0], calls args[1] with the JSON arguments, and
// prints the result or the failure.
func runCall(ctx context.Context, cat *extension.Catalogs, f callFlags, args []string, logger *slog.Logger, stdout, stderr io.Writer) error {
	var reg spi.URL // the registry, once known: errors show it as serve does
	// failCall is fail for the call's own failure: its line names the
	// service, the method and the provider that failed it (tester53
	// finding 5), callContext.
	var service, method string
	failCall := func(err error) error {
		if sig, ok := signalOf(ctx); ok { // exit 130 for SIGINT, as bench
			msg := "call: interrupted by " + signalName(sig) + interruptedWhere(err, service)
			errorLine(stderr, f.logFormat, "call", "airnode: "+msg, msg)
			return &interruptedError{sig: sig, msg: msg}
		}
		var se *spi.Error
		if !errors.As(err, &se) {
			se = &spi.Error{Status: spi.StatusClientError, Message: err.Error(), Cause: err}
			err = se
		}
		line := showDefaultRegistry(err.Error(), reg)
		msg := strings.TrimPrefix(line, se.Status.String()+": ")
		attrs := []any{"status", se.Status.String()}
		if service != "" {
			// the text names them; the JSON record has them as fields
			suffix, more := callContext(line, service, method, se.Provider)
			line += suffix
			attrs = append(attrs, more...)
		}
		errorLine(stderr, f.logFormat, "call", line, msg, attrs...)
		printBizError(stderr, f.logFormat, err) // a provider's spi.BizError: its code and details
		return &callError{err: err}
	}
	fail := failCall // before the call: no service, method or provider yet
	// failUsage is fail for a flag value of the wrong form, or for two
	// flags or sources that contradict each other: a usage error ("airnode:
	// call: --timeout "-1s": want ..."), as bench's and the other
	// commands', without a status, which would read as the provider's
	// answer (tester71 #9); exit 2
	failUsage := func(err error) error {
		if ue, ok := errors.AsType[*usageError](err); ok {
			err = ue.err
		}
		return usage(fmt.Errorf("call: %w", err))
	}
	var flags []flagParam
	if f.timeout != "" {
		if err := checkDuration("--timeout", f.timeout); err != nil {
			return failUsage(err)
		}
		flags = append(flags, flagParam{"--timeout", f.timeout, "timeout", f.timeout})
	}
	if f.codec != "" {
		flags = append(flags, flagParam{"--codec", f.codec, "codec", f.codec})
	}
	kv, err := attachmentPairs(f.attachments)
	if err != nil {
		return failUsage(err)
	}
	if err := methodInServiceURL("call", args[0]); err != nil {
		return failUsage(err)
	}
	if err := serviceArgsOrder(args[0], args[1]); err != nil {
		return failUsage(err)
	}
	u, err := consumerURL(f.cfg, args[0], f.params, flags)
	if err != nil {
		if _, ok := errors.AsType[*usageError](err); ok { // -p key without "=", or two sources of a key that disagree
			return failUsage(err)
		}
		return fail(err)
	}
	// a key's value the kernel refuses, given on the command line: a
	// usage error naming where (commandLineKeyError)
	given := commandLineKeys(f.params, flags, "SERVICE_URL", argQuery(args[0]))
	for _, w := range configWarnings(f.cfg, u, args[1], flags) {
		warnLine(stderr, f.logFormat, "call", w)
	}
	// the arguments are read after the URL, whose payload limit bounds
	// an @FILE or @- argument
	limit, err := u.Size("payload", protocol.DefaultPayload)
	if err != nil {
		if ke := commandLineKeyError("call", u.ServiceKey(), given, err); ke != nil {
			return failUsage(ke)
		}
		return fail(err)
	}
	method = args[1]
	callArgs := make([]any, 0, len(args)-2)
	if i := slices.Index(args[2:], "@-"); i >= 0 && slices.Contains(args[2+i+1:], "@-") {
		return failUsage(errors.New("argument @- given twice: standard input can be read once; give the other arguments inline or as @FILE"))
	}
	for _, a := range args[2:] {
		if path, ok := strings.CutPrefix(a, "@"); ok {
			data, err := readArgFile(path, f.stdin, limit)
			if err != nil {
				return fail(fmt.Errorf("argument %s: %w", a, err))
			}
			v, err := decodeArg(string(data))
			if err != nil { // an ARG_JSON of the wrong form, as inline: a usage error (bench --args's too)
				return failUsage(fmt.Errorf("argument %s (%d bytes): %w", a, len(data), err))
			}
			callArgs = append(callArgs, v)
			continue
		}
		v, err := decodeArg(a)
		if err != nil {
			return failUsage(err)
		}
		callArgs = append(callArgs, v)
	}
	// --timeout (default 1s) bounds connecting and the call with its
	// retries, as health's --timeout and curl's --max-time do (tester65
	// #5, tester71 #2): connect.timeout is cut to it unless set, and the
	// call's context ends with it, so that failover starts no retry after
	// it and each attempt gets what is left. Given (commandLineBound), it
	// bounds the whole command from its start: the plugins' start, the
	// waits for the registry's directory and for a provider to be listed
	// (2 s otherwise) and the refer too; the default's clock starts once a
	// provider is listed. A timeout the consumer's URL sets (-p timeout=,
	// methods.M.timeout, SERVICE_URL's ?timeout=, the configuration's
	// reference) is each attempt's instead, as Dubbo's and the kernel's
	// everywhere else (tester74 #3, #4): failover's retries get it each,
	// and the command is bounded by them and connect.timeout.
	bound, boundErr := u.MethodDuration(method, "timeout", kernel.DefaultTimeout)
	_, connectSet := u.Param("connect.timeout")
	_, _, keySet := u.MethodParam(method, "timeout")
	perAttempt := keySet && f.timeout == ""
	whole := boundErr == nil && bound > 0 && !connectSet && !perAttempt
	var budget time.Time // whole: when the command's time is up; zero until known
	_, explicit := commandLineBound(f.cfg, f, args)
	explicit = explicit && whole && !f.began.IsZero()
	if explicit {
		budget = f.began.Add(bound)
	}
	// left is d cut to what is left of the budget
	left := func(d time.Duration) time.Duration {
		if budget.IsZero() {
			return d
		}
		return max(min(d, time.Until(budget)), 0)
	}
	ranOut := func() bool { return !budget.IsZero() && !time.Now().Before(budget) }
	reg, err = referRegistry(cat, f.registry, f.registrySet, u, args[0], "call", stderr, f.logFormat)
	if err != nil {
		if _, ok := errors.AsType[*usageError](err); ok { // SERVICE_URL's host without a port
			return failUsage(err)
		}
		if re := f.registryRefusal(err); re != nil {
			return failUsage(re)
		}
		return fail(err)
	}
	if !reg.IsZero() {
		if err := awaitFileRegistryDir(ctx, "call", f.registry, f.registrySource, left(registryGrace)); err != nil {
			return fail(err)
		}
	}
	if f.accessLogger != nil && accessLogOnLogger(u) {
		if b := accessLogBuilder(cat); b != nil {
			// the access lines alone at info: the node's own lines
			// ("directory: provider added") stay at warn (tester61 #7)
			b.Logger = f.accessLogger
		} else {
			logger = f.accessLogger // a plugin's accesslog logs through the node
		}
	}
	if whole && bound < kernel.DefaultConnectTimeout {
		u = u.WithParams(map[string]string{"connect.timeout": bound.String()})
	}
	// one call, then exit: a channel the provider closes is not followed
	// by a Warn promising a reconnect nobody waits for (WithOneShot)
	node := kernel.NewNode(cat, kernel.WithLogger(logger), kernel.WithOneShot(), kernel.WithKeySource(envKeySource(f.cfg, given)))
	defer node.Close()
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, left(10*time.Second))
	ref, err := node.Refer(rctx, u, reg)
	cancel()
	if ke := commandLineKeyError("call", u.ServiceKey(), given, err); ke != nil {
		return failUsage(ke)
	}
	if re := f.registryRefusal(err); re != nil {
		return failUsage(re)
	}
	if err != nil {
		if ranOut() && ctx.Err() == nil {
			err = ranOutWhile(err, bound, "while referring "+u.ServiceKey())
		}
		return fail(err)
	}
	// A registry that lists no provider yet gets registryGrace for one to
	// register, as bench's (without it, a deploy script's call
	// right after starting serve failed SERVICE_NOT_FOUND in 30 ms), cut
	// to what is left of --timeout; one listing providers of another
	// group, version or transport only does not: the call fails at once,
	// naming them.
	awaitListed(ctx, ref, left(registryGrace))
	unlisted := ranOut() && len(ref.ProviderConnections()) == 0 && len(ref.Providers()) == 0 && len(ref.Ignored()) == 0
	listed := time.Now()
	if whole && budget.IsZero() {
		budget = listed.Add(bound)
	}
	// The call's timeout bounds connecting and the call (whole): the
	// clock starts once Refer returned (plugins started) and a provider is
	// listed. With connect.timeout set, the first connection gets its
	// own time instead, as Dubbo's connect at refer and bench's
	// waitProviders do: for a 100 ms --timeout over a link where dialling
	// and the first ping take longer (tester24 #8), up to connectWait;
	// the call's timeout then bounds the call alone. When no provider
	// connects, the call below says why.
	//
	// Then the other listed providers' first attempts get up to
	// callSettleMax to end too, so that the pick below is by effective
	// weight over every provider that answers: without it, a provider
	// restarted a moment ago (warm-up: 1 % of its weight) got 9 of 40
	// one-shot calls whenever it was the first to connect. The wait is
	// settleWait: a few times what the first connection took, so that a
	// listed provider whose dial hangs (an unroutable address) costs a
	// call on loopback 100 ms, not the whole callSettleMax (1 s per call
	// in a script looping over call, with such an entry listed).
	//
	// Waiting for a connection ends healthMargin after the budget; the
	// call's context then ends its timeout after the call starts (the
	// providers' when the consumer sets none: invokeBound), or then when
	// the wait took longer or the command line gave the timeout,
	// whichever comes first: its first attempt, made at once, ends on its
	// own timer ("timed out after 300ms"), and failover starts no retry
	// after it (each retry gets what is left).
	callCtx := ctx
	if whole {
		var dcancel context.CancelFunc
		callCtx, dcancel = context.WithDeadline(ctx, budget.Add(healthMargin))
		defer dcancel()
	}
	ready := false
	if !unlisted {
		wctx, cancel := context.WithTimeout(callCtx, connectWait(ref.URL()))
		ready = ref.WaitReady(wctx)
		if ready {
			sctx, scancel := context.WithTimeout(wctx, settleWait(time.Since(start)))
			ref.WaitSettled(sctx)
			scancel()
		}
		cancel()
	}
	if !explicit && time.Since(listed) <= healthMargin {
		// connected at once: the call's own timeout (invokeBound) bounds
		// the rest, not the consumer's default
		callCtx = ctx
	}
	// A generic invocation (Dubbo's mark): the provider refuses a key
	// naming no struct field, a typo here; -a generic=false overrides.
	att := append([]string{spi.AttachmentGeneric, spi.GenericTrue}, kv...)
	if d, ok := ownTimeout(f.timeout, u, method); ok {
		att = append(att, spi.AttachmentTimeout, d)
	}
	var answered map[string]string
	invoked := time.Now()
	callBound := invokeBound(u, ref, method, bound)
	if perAttempt {
		callBound = 0 // each attempt's timeout is the kernel's to apply
	}
	// invokeCtx is the context of a call made now: with connect.timeout
	// set too, --timeout bounds the call and its retries alone, from when
	// it is made (the tcp retry's too, once it connected)
	invokeCtx := func() (context.Context, context.CancelFunc) {
		cctx := spi.WithAttachments(callCtx, att...)
		if f.showAttachments {
			cctx = spi.ReceiveAttachments(cctx, &answered)
		}
		if boundErr == nil && callBound > 0 {
			return context.WithTimeout(cctx, callBound)
		}
		return cctx, func() {}
	}
	cctx, icancel := invokeCtx()
	defer icancel()
	v, err := ref.Invoke(cctx, method, callArgs...)
	if reg.IsZero() {
		// a direct address whose provider closed the connection at its
		// first ping: with no transport named, one more try over the
		// other bundled transport, as health's (nothing was sent)
		var rv any
		ou, retried, rerr := overOtherTransport(callCtx, time.Since(listed), "call", u, err, func(ou spi.URL) (bool, error) {
			_ = ref.Close()
			rctx, cancel := context.WithTimeout(ctx, left(10*time.Second))
			r, err := node.Refer(rctx, ou, reg)
			cancel()
			if err != nil {
				return false, err
			}
			ref = r
			wctx, cancel := context.WithTimeout(callCtx, connectWait(ou))
			connected := r.WaitReady(wctx)
			cancel()
			invoked = time.Now()
			rctx, rcancel := invokeCtx()
			defer rcancel()
			rv, err = r.Invoke(rctx, method, callArgs...)
			return connected, err
		}, stderr, f.logFormat)
		if retried {
			u, v = ou, rv
		}
		err = mismatchError(rerr, u, transportSource(given, f.cfg, args[0]))
	}
	if f.showAttachments && ctx.Err() == nil { // interrupted: no answer to show
		printResponseAttachments(stderr, f.logFormat, answered)
	}
	if err != nil {
		service = ref.URL().ServiceKey()
		switch {
		case ctx.Err() != nil: // interrupted: failCall says so
		case unlisted:
			err = ranOutWhile(err, bound, "while waiting for a provider of "+service+" to be listed"+methodHint(service))
		case spi.StatusOf(err) == spi.StatusServiceNotFound && len(ref.AllProviders()) == 0 && methodHint(service) != "":
			// demo.Echo.Echo: the method written into the service key
			if se, ok := errors.AsType[*spi.Error](err); ok {
				e := spi.Errorf(se.Status, "%s%s", se.Message, methodHint(service))
				e.Provider, e.Cause = se.Provider, err
				err = e
			}
		case whole && !ready && ranOut():
			// the first connection's attempts, cut to --timeout, took it all
			err = connectingTimedOut(err, bound, u)
		case boundErr == nil && callBound > 0 && time.Since(invoked) >= callBound-callBound/20 && timedOut(err) &&
			!strings.Contains(err.Error(), callBound.String()) && !strings.Contains(err.Error(), "timed out after"):
			// a message that names no time (a filter plugin's "the call's
			// deadline passed"); the exchange's says how long it waited.
			// Within a twentieth of the bound: a filter plugin's gRPC
			// deadline may end its round trip a moment before cctx's
			// (seen once under load)
			err = spentTimeout(err, callBound)
		}
		if ctx.Err() == nil && spi.StatusOf(err) == spi.StatusServerTimeout && defaultTimeout(f.timeout, u, ref, method) {
			err = defaultTimeoutNoted(err, callBound)
		}
		return failCall(err)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(jsonable(v)); err != nil {
		return fail(fmt.Errorf("result is not printable as JSON: %w", err))
	}
	_, err = stdout.Write(buf.Bytes())
	return err
}

// interruptedWhere says, for err, the error of a call (of service, "" when
// it was not made yet) that a signal interrupted, whether its request had
// been sent: "; the request had been sent to ADDR and may have run" (the
// exchange sent the cancel event after it, spi.ErrRequestSent), " before
// the request was sent" (the call was made, and nothing reached a
// provider), or "" before the call.
func interruptedWhere(err error, service string) string {
	if service == "" || err == nil {
		return ""
	}
	if errors.Is(err, spi.ErrRequestSent) {
		var se *spi.Error
		if errors.As(err, &se) && se.Provider != "" {
			return "; the request had been sent to " + se.Provider + " and may have run"
		}
		return "; the request had been sent and may have run"
	}
	return " before the request was sent"
}

// callContext returns what a failed call's error line adds to line, its
// text, to name the call and the provider that failed it, and the same as
// attributes of its JSON record. The text gets " (call SERVICE.METHOD,
// provider ADDR)", each part only when line does not say it already (a
// provider's message often names the call; the consumer's own errors
// name the provider they could not reach), nothing when line says both;
// the record gets "service" and "method" always, and "provider" when a
// provider was called (spi.Error.Provider; "" when none was: no provider
// available, a call the consumer refused).
func callContext(line, service, method, provider string) (string, []any) {
	attrs := []any{"service", service, "method", method}
	var parts []string
	if call := service + "." + method; !strings.Contains(line, call) {
		parts = append(parts, "call "+call)
	}
	if provider != "" {
		attrs = append(attrs, "provider", provider)
		if !strings.Contains(line, provider) {
			parts = append(parts, "provider "+provider)
		}
	}
	if len(parts) == 0 {
		return "", attrs
	}
	return " (" + strings.Join(parts, ", ") + ")", attrs
}

// printResponseAttachments writes a call's response attachments on w for
// --show-attachments: an "attachment KEY=VALUE" line each, sorted by key,
// or "no response attachments"; under --log-format json one record with
// the object "attachments" (empty when none, as the CLI's JSON documents
// keep their fields rather than drop empty ones).
func printResponseAttachments(w io.Writer, logFormat string, m map[string]string) {
	if strings.EqualFold(logFormat, "json") {
		if m == nil {
			m = map[string]string{}
		}
		stderrLine(w, logFormat, slog.LevelInfo, "call", "", "response attachments", "attachments", m)
		return
	}
	if len(m) == 0 {
		fmt.Fprintln(w, "no response attachments")
		return
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, "attachment %s=%s\n", quoteIfNeeded(k, "="), quoteIfNeeded(m[k], ""))
	}
	fmt.Fprint(w, b.String())
}

// quoteIfNeeded returns s, or s as a Go string literal when it is empty or
// holds a space, a quote, a backslash, a character that is not printable,
// or one of also: so that each line reads back as one KEY=VALUE.
func quoteIfNeeded(s, also string) string {
	if s == "" || strings.ContainsAny(s, also+` "\`) || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(s)
	}
	return s
}

// ownTimeout returns the "timeout" attachment (spi.AttachmentTimeout)
// that call and bench send with each call of method when flag, their
// --timeout, is given ("" when not): flag itself, this call's own
// timeout per attempt, as Dubbo's per-call RpcContext timeout beats every
// URL level, so that the provider's method-level key (serve -p
// Sleep.timeout=300ms, which Dubbo's order puts above the consumer's
// service-level timeout) no longer cuts a --timeout 2s call to 300 ms
// (tester90 #1). ok is false when flag is "" or when u, the consumer's
// URL, sets a method-level timeout of method: the command line's own
// (-p methods.M.timeout=, SERVICE_URL's ?M.timeout=, since a file's is
// dropped for --timeout: applyReference), which then decides each
// attempt, --timeout bounding the whole call. A timeout a URL key sets
// (-p timeout=) keeps Dubbo's order.
func ownTimeout(flag string, u spi.URL, method string) (string, bool) {
	if flag == "" {
		return "", false
	}
	if _, key, ok := u.MethodParam(method, "timeout"); ok && key != "timeout" {
		return "", false
	}
	return flag, true
}

// connectingTimedOut returns err, a call that failed once its timeout
// (bound) ran out with no provider connected (CHANNEL_INACTIVE,
// CLIENT_TIMEOUT: a hung provider, a black-holed path), as CLIENT_TIMEOUT saying that the timeout bounds
// connecting too, and how to give the first connection its own time, as
// health reports its probe's; any other failure (a provider's answer, its
// SERVER_TIMEOUT) is returned as is.
func connectingTimedOut(err error, bound time.Duration, u spi.URL) error {
	se, ok := errors.AsType[*spi.Error](err)
	if !ok || se.Status != spi.StatusChannelInactive && se.Status != spi.StatusClientTimeout {
		return err
	}
	e := spi.Errorf(spi.StatusClientTimeout, "no provider answered within --timeout %v, connecting included (connect.timeout %s; set -p connect.timeout=D to give the first connection its own time): %s",
		bound, u.ParamOr("connect.timeout", kernel.DefaultConnectTimeout.String()), se.Message)
	e.Provider, e.Cause = se.Provider, err
	return e
}

// ranOutWhile returns err, a call's failure once its --timeout (bound)
// ran out, with what was waiting (doing: "while waiting for a provider
// of demo.Nope to be listed") added to its message; its status stays
// (CLIENT_TIMEOUT for an error without one, as for the --timeout's other
// expiries: a registry's Subscribe still running, kernel.LeftRunningError).
func ranOutWhile(err error, bound time.Duration, doing string) error {
	se, ok := errors.AsType[*spi.Error](err)
	if !ok {
		se = &spi.Error{Status: spi.StatusClientTimeout, Message: err.Error()}
	}
	e := spi.Errorf(se.Status, "%s; --timeout %v ran out %s", se.Message, bound, doing)
	e.Provider, e.Cause = se.Provider, err
	return e
}

// invokeBound returns how long the call of method on ref may take, its
// retries included: bound, the timeout of u (the consumer's: the command
// line's or the configuration's), when u sets one for method; else the
// longest of the listed providers' (their registered URL's timeout is
// the consumer's default, as in Dubbo: serve's protocol timeout 2s gives
// a 1.5 s method its time), else bound (the kernel's default).
func invokeBound(u spi.URL, ref *kernel.Reference, method string, bound time.Duration) time.Duration {
	if _, _, set := u.MethodParam(method, "timeout"); set {
		return bound
	}
	longest := time.Duration(0)
	for _, p := range ref.AllProviders() {
		if d, err := p.URL().MethodDuration(method, "timeout", kernel.DefaultTimeout); err == nil {
			longest = max(longest, d)
		}
	}
	if longest == 0 {
		return bound
	}
	return longest
}

// spentTimeout returns err, a call's timeout failure once its timeout
// (bound) ran out that does not name it, saying so: its status stays.
func spentTimeout(err error, bound time.Duration) error {
	se, ok := errors.AsType[*spi.Error](err)
	if !ok {
		return err
	}
	e := spi.Errorf(se.Status, "%s; the call's timeout of %v ran out (--timeout, default 1s, or the providers' timeout when the consumer sets none: it bounds the call with its retries; -p timeout= bounds each attempt instead)", se.Message, bound)
	e.Provider, e.Cause = se.Provider, err
	return e
}

// defaultTimeout reports whether the call of method on ref ran with the
// kernel's default timeout (kernel.DefaultTimeout, 1s): flag, call's
// --timeout, is "", u (the consumer's URL: -p, SERVICE_URL's query, the
// configuration's reference) sets no timeout for method, and no listed
// provider publishes one (a provider's is its consumers' default).
func defaultTimeout(flag string, u spi.URL, ref *kernel.Reference, method string) bool {
	if flag != "" {
		return false
	}
	if _, _, set := u.MethodParam(method, "timeout"); set {
		return false
	}
	for _, p := range ref.AllProviders() {
		if _, _, set := p.URL().MethodParam(method, "timeout"); set {
			return false
		}
	}
	return true
}

// defaultTimeoutNoted returns err, a SERVER_TIMEOUT of a call that ran
// with the default timeout (defaultTimeout; bound, 1s), saying so and how
// to change it, as a method that needs longer (demo.Echo's Sleep 2000)
// is not a slow provider: "...; timeout 1s, the default; --timeout to
// change". Its status and provider stay.
func defaultTimeoutNoted(err error, bound time.Duration) error {
	se, ok := errors.AsType[*spi.Error](err)
	if !ok || strings.Contains(se.Message, "--timeout") {
		return err
	}
	e := spi.Errorf(se.Status, "%s; timeout %v, the default; --timeout to change", se.Message, bound)
	e.Provider, e.Cause = se.Provider, err
	return e
}

// timedOut reports whether err is a CLIENT_TIMEOUT or SERVER_TIMEOUT.
func timedOut(err error) bool {
	st := spi.StatusOf(err)
	return st == spi.StatusClientTimeout || st == spi.StatusServerTimeout
}

// callSettleMax bounds how long `airnode call`, once a provider is
// usable, waits for the other listed providers' first connection attempts
// to end (Reference.WaitSettled): on loopback or a LAN they end within
// milliseconds, and a provider whose attempt takes longer (hung, SIGSTOPped:
// its attempt ends only at connect.timeout, 3 s by default; an unroutable
// address) costs the call settleWait, at most this much, and is left out
// of its pick. A consistenthash call still waits
// for them all, up to connect.timeout, as before.
const callSettleMax = time.Second

// callSettleMin is settleWait's floor: on loopback or a LAN the other
// providers' first attempts end within milliseconds of the first's.
const callSettleMin = 100 * time.Millisecond

// settleWait is how long `airnode call` waits for the other listed
// providers' first connection attempts once one provider is usable, given
// first, the time from refer to that provider being usable: 4 × first
// (providers on the same network answer about as fast), at least
// callSettleMin, at most callSettleMax.
func settleWait(first time.Duration) time.Duration {
	return min(max(4*first, callSettleMin), callSettleMax)
}

// awaitListed returns once ref's directory lists a provider (at once for
// a direct URL or a registry that has listed one), once the registry
// lists providers of the interface that the reference leaves out (another
// group, version or transport: Reference.Ignored; the call's "no provider
// available" names them), after grace, or when ctx ends, whichever comes
// first. It does not wait for a connection: WaitReady does.
func awaitListed(ctx context.Context, ref *kernel.Reference, grace time.Duration) {
	deadline := time.Now().Add(grace)
	for len(ref.ProviderConnections()) == 0 && len(ref.Providers()) == 0 && len(ref.Ignored()) == 0 && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// attachmentPairs turns -a key=value flags into spi.WithAttachments' pairs,
// refusing a flag without "=", an empty key, a key given twice (as -p
// refuses one), and the keys the kernel reserves (spi.ReservedAttachment;
// "timeout" naming --timeout, the one way the command line sets a call's
// timeout), before anything is dialled.
func attachmentPairs(flags []string) ([]string, error) {
	kv := make([]string, 0, 2*len(flags))
	keys := make([]string, 0, len(flags)) // keys[i] is flags[i]'s
	for _, a := range flags {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-a %q: want key=value", a)
		}
		if strings.EqualFold(k, spi.AttachmentTimeout) {
			return nil, fmt.Errorf("-a %q: the call's timeout is set with --timeout %s, not -a (--timeout sends it as the kernel's %q attachment, the call's own timeout, which beats every URL level; -p timeout= sets the URL key)", a, v, spi.AttachmentTimeout)
		}
		if spi.ReservedAttachment(k) {
			shown := a
			if spi.IsSecretKey(strings.ToLower(k)) {
				shown = k + "=***" // any case: the value was meant as a token
			}
			return nil, fmt.Errorf("-a %q: attachment %q is reserved by the kernel (reserved: %s); a token comes from -p token=...", shown, k, spi.ReservedAttachments())
		}
		if i := slices.Index(keys, k); i >= 0 {
			return nil, fmt.Errorf("-a %q and -a %q: key %q given twice: give each attachment once", flags[i], a, k)
		}
		keys = append(keys, k)
		kv = append(kv, k, v)
	}
	return kv, nil
}
