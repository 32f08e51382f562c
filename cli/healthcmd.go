package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/airnode/airnode/extensions/cluster/failover"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// healthFlags are `airnode health`'s flags.
type healthFlags struct {
	timeout       string
	params        []string
	failOnWarning bool
}

// healthCommand returns `airnode health`.
func healthCommand(a *app) *cobra.Command {
	var f healthFlags
	cmd := &cobra.Command{
		Use:   "health [flags] ADDR [SERVICE]",
		Short: "Ask a provider whether it serves SERVICE (airnode.Health Check); exit 0 when SERVING",
		Long: `health asks the provider listening on ADDR (host:port, or
airnode://host:port) the health service every provider address serves,
airnode.Health, whether it serves SERVICE now: SERVICE is a service key
(demo.Echo, group/demo.Echo:1.0), or none for the node as a whole. It
prints the answer on stdout and exits 0 for SERVING, 1 otherwise:

  SERVING          the service is exported on ADDR and serves
  NOT_SERVING      the node is draining (SIGTERM received), a plugin the
                   service depends on does not run, or (no SERVICE) the
                   node is not ready: starting, draining, a plugin down
  SERVICE_UNKNOWN  the service is not exported on ADDR

NOT_SERVING and SERVICE_UNKNOWN print why on stderr. The node is
NOT_SERVING once no service exported on ADDR serves; while some do and
others do not (a plugin they depend on is unresponsive or restarting),
it is SERVING with a warning on stderr naming each service that does not
serve and why, and the exit is 0 (as gRPC's health server, whose overall
status is not that of one service) unless --fail-on-warning is given:
then it is 1, for an exec probe that should fail while any service is
down. A SERVING answer also carries the node's own warnings, those
serve's /stats lists under "warnings" (airnode_health_warning), such
as a registry whose entries are not in it (ZooKeeper's session
expired, or check=false queued them for want of a session): each is
printed on stderr as a warning, and the exit stays 0, --fail-on-warning
or not. A provider that does
not answer (refused, --timeout passed) or serves no health service
(health.service=false: SERVICE_NOT_FOUND) prints the status and message
on stderr and exits 1. --timeout bounds the whole probe, connecting
included: connect.timeout (dial and first ping; 3s by default) is cut to
--timeout unless set with -p, so a node that accepts and never answers
fails the probe within --timeout and a few ms, before an exec probe's
own timeoutSeconds. An address that answers HTTP instead (serve
--metrics's) is named as such. It speaks airnode's protocol, not HTTP: a
container's exec probe needs no --metrics port.

A provider serving --transport tcp wants -p transport=tcp. Without -p
transport=, a provider that closes the probe's connection at its first
ping (as one serving tcp closes a smux connection) is asked once more
over tcp, within the same --timeout; a warning on stderr says so, and the
exit is the answer's (call and bench do the same for a direct
SERVICE_URL). With -p transport=NAME the probe never guesses.

  airnode health 127.0.0.1:20880 demo.Echo
  airnode health 127.0.0.1:20880 -p tls=true -p tls.ca=ca.pem
  airnode health 127.0.0.1:20880 -p transport=tcp

The same is airnode call airnode://ADDR/airnode.Health Check '"demo.Echo"'.
No registry is read.`,
		Args: argsRange(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, err := a.Catalogs()
			if err != nil {
				return err
			}
			logger := a.Logger()
			if !cmd.Flags().Changed("log-level") {
				logger, _ = newLogger(a.stderr, "warn", a.logFormat)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			service := ""
			if len(args) == 2 {
				service = args[1]
			}
			u, err := healthURL(args[0], f)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "health: ") {
					err = fmt.Errorf("health: %w", err) // as the command's other errors
				}
				return usage(err)
			}
			// a key's value the kernel refuses, given on the command
			// line: a usage error naming where (commandLineKeyError)
			given := healthKeys(args[0], f)
			return runHealth(ctx, kernel.NewNode(cat, kernel.WithLogger(logger), kernel.WithOneShot()), u, given, service, f.failOnWarning, a.logFormat, a.stdout, a.stderr)
		},
	}
	fl := cmd.Flags()
	fl.Var(durationText{&f.timeout}, "timeout", "how long the whole probe may take, connecting included: 500ms, 1.5s, or a bare number of ms (URL key timeout; default 1s; also caps connect.timeout unless -p sets it)")
	fl.BoolVar(&f.failOnWarning, "fail-on-warning", false, "exit 1 also when the node answers SERVING with a warning: some service exported on ADDR does not serve (a plugin it depends on is unresponsive or restarting)")
	fl.StringArrayVarP(&f.params, "param", "p", nil, "key=value URL parameter of the consumer (repeatable): tls=true, tls.ca=FILE, codec, transport...")
	return cmd
}

// healthURL returns the URL of the health service at addr (host:port or
// airnode://host:port[/airnode.Health]) with f's keys.
func healthURL(addr string, f healthFlags) (spi.URL, error) {
	raw := addr
	if !strings.Contains(raw, "://") {
		raw = kernel.Protocol + "://" + raw
	}
	u, err := spi.Parse(raw)
	if err != nil {
		return spi.URL{}, fmt.Errorf("health: ADDR %q: %w", addr, err)
	}
	if p := u.Path(); p != "" && p != kernel.HealthService {
		return spi.URL{}, fmt.Errorf("health: ADDR %q names service %q: give the address alone (host:port) and the service as the second argument", addr, p)
	}
	if u.Host() == "" || u.Port() == 0 {
		return spi.URL{}, fmt.Errorf("health: ADDR %q: want host:port of a provider, such as 127.0.0.1:20880", addr)
	}
	params, err := parseParams(f.params)
	if err != nil {
		return spi.URL{}, err
	}
	if f.timeout != "" {
		if err := checkDuration("--timeout", f.timeout); err != nil {
			return spi.URL{}, err
		}
		if v, ok := params["timeout"]; ok && !sameParam("timeout", v, f.timeout) {
			return spi.URL{}, fmt.Errorf("-p timeout=%s conflicts with --timeout %s (which sets timeout=%s): give one of them", v, f.timeout, f.timeout)
		}
		params["timeout"] = f.timeout
	}
	if c, ok := params["cluster"]; !ok || c == failover.Name {
		// one try: retries=0 for failover, the one bundled cluster
		// that reads it (with another, Refer would warn of a key the
		// command line never gave)
		params["retries"] = "0"
	}
	hu := u.WithPath(kernel.HealthService).WithParams(params)
	timeout, err := hu.Duration("timeout", kernel.DefaultTimeout)
	if _, set := hu.Param("connect.timeout"); err == nil && !set && timeout > 0 && timeout < kernel.DefaultConnectTimeout {
		// the probe's timeout bounds the connection's first attempt too
		// (dial and first ping): a provider that accepts and never
		// answers is reported within it, not after connect.timeout's 3s
		hu = hu.WithParams(map[string]string{"connect.timeout": timeout.String()})
	}
	return hu, nil
}

// healthKeys maps the URL keys health's command line sets (-p,
// --timeout, ADDR's query) to where each was given (commandLineKeys).
func healthKeys(addr string, f healthFlags) map[string]givenKey {
	var flags []flagParam
	if f.timeout != "" {
		flags = append(flags, flagParam{"--timeout", f.timeout, "timeout", f.timeout})
	}
	raw := addr
	if !strings.Contains(raw, "://") {
		raw = kernel.Protocol + "://" + raw
	}
	var query map[string]string
	if u, err := spi.Parse(raw); err == nil {
		query = u.Params()
	}
	return commandLineKeys(f.params, flags, "ADDR", query)
}

// healthMargin is how much longer than its timeout a probe may take: the
// time to report a connection attempt that ended at the timeout.
const healthMargin = 100 * time.Millisecond

// healthError is a probe answered with another status than SERVING, or
// not answered: already reported on stderr, exit 1.
type healthError struct{ err error }

func (e *healthError) Error() string { return e.err.Error() }
func (e *healthError) Unwrap() error { return e.err }

// ExitCode is 1: the service does not serve, or nobody answered.
func (e *healthError) ExitCode() int { return 1 }

// runHealth asks the health service at u about service with node, which
// it closes, and reports the answer: the status on stdout, why (not
// SERVING) or its warning (SERVING, kernel.HealthWarningAttachment) on
// stderr; a warning fails the probe when failOnWarning.
func runHealth(ctx context.Context, node *kernel.Node, u spi.URL, given map[string]givenKey, service string, failOnWarning bool, logFormat string, stdout, stderr io.Writer) error {
	defer node.Close()
	fail := func(err error) error {
		if sig, ok := signalOf(ctx); ok {
			msg := "health: interrupted by " + signalName(sig)
			errorLine(stderr, logFormat, "health", "airnode: "+msg, msg)
			return &interruptedError{sig: sig, msg: msg}
		}
		var se *spi.Error
		if !errors.As(err, &se) {
			se = &spi.Error{Status: spi.StatusClientError, Message: err.Error(), Cause: err}
			err = se
		}
		errorLine(stderr, logFormat, "health", err.Error(), strings.TrimPrefix(err.Error(), se.Status.String()+": "), "status", se.Status.String())
		return &healthError{err: err}
	}
	ref, err := node.Refer(ctx, u, spi.URL{})
	if ke := commandLineKeyError("health", u.ServiceKey(), given, err); ke != nil {
		return ke
	}
	if err != nil {
		return fail(err)
	}
	// The probe's timeout bounds all of it, connecting included (an exec
	// probe's own timeout kills a probe that outlasts it): its connection
	// attempt ends within connect.timeout, which healthURL made no longer
	// than the timeout unless the user set it.
	timeout, err := u.Duration("timeout", kernel.DefaultTimeout)
	if err != nil || timeout <= 0 {
		timeout = kernel.DefaultTimeout // Refer refused a bad one already
	}
	pctx, cancel := context.WithTimeout(ctx, timeout+healthMargin)
	defer cancel()
	probed := time.Now()
	ref.WaitReady(pctx)
	var att map[string]string
	v, err := ref.Invoke(spi.ReceiveAttachments(pctx, &att), kernel.HealthCheck, service)
	// A provider that closed the connection at its first ping most
	// likely serves the other bundled transport (serve --transport tcp):
	// one more try over it, within what is left of --timeout; the first
	// try took a round trip or two.
	var oatt map[string]string
	var ov any
	ou, retried, err := overOtherTransport(pctx, time.Since(probed), "health", u, err, func(ou spi.URL) (bool, error) {
		_ = ref.Close()
		connected, rv, rerr := referAndCheck(pctx, node, ou, service, &oatt)
		ov = rv
		return connected, rerr
	}, stderr, logFormat)
	if retried {
		u, v, att = ou, ov, oatt
	}
	err = mismatchError(err, u, given["transport"].by)
	if err != nil {
		if ctx.Err() == nil && pctx.Err() != nil {
			msg := err.Error()
			var se *spi.Error
			if errors.As(err, &se) {
				msg = se.Message
			}
			err = spi.Errorf(spi.StatusClientTimeout, "health: %s did not answer within --timeout %v, connecting included (connect.timeout %s): %s",
				u.Address(), timeout, u.ParamOr("connect.timeout", kernel.DefaultConnectTimeout.String()), msg)
		}
		return fail(httpPortHint(pctx, u.Address(), err))
	}
	status, ok := v.(string)
	if !ok {
		return fail(spi.Errorf(spi.StatusBadResponse, "%s at %s answered %T %v, not a status", kernel.HealthService, u.Address(), v, v))
	}
	if _, err := fmt.Fprintln(stdout, status); err != nil {
		return err
	}
	what := "the node"
	if service != "" {
		what = service
	}
	if status == kernel.HealthServing {
		if nodeWarn := att[kernel.HealthNodeWarningAttachment]; nodeWarn != "" {
			// the node's own warnings (a registry's entries not in it):
			// said, never a failure of the probe, as /ready stays 200
			warnLine(stderr, logFormat, "health", fmt.Sprintf("%s on %s is SERVING, with a node warning: %s", what, u.Address(), nodeWarn), "status", status)
		}
		warn := att[kernel.HealthWarningAttachment]
		if warn == "" {
			return nil
		}
		msg := fmt.Sprintf("%s on %s is SERVING, but not every service exported there serves: %s", what, u.Address(), warn)
		if !failOnWarning {
			warnLine(stderr, logFormat, "health", msg, "status", status)
			return nil
		}
		errorLine(stderr, logFormat, "health", "airnode: health: "+msg, msg, "status", status)
		return &healthError{err: errors.New(msg)}
	}
	msg := fmt.Sprintf("%s on %s is %s", what, u.Address(), status)
	if why := att[kernel.HealthReasonAttachment]; why != "" {
		msg += ": " + why
	}
	errorLine(stderr, logFormat, "health", "airnode: health: "+msg, msg, "status", status)
	return &healthError{err: errors.New(msg)}
}

// referAndCheck refers to the health service at u with node and asks it
// about service within ctx, the response's attachments in att: whether
// its connection came up (the provider answered, whatever it said), the
// answer, and the error.
func referAndCheck(ctx context.Context, node *kernel.Node, u spi.URL, service string, att *map[string]string) (bool, any, error) {
	ref, err := node.Refer(ctx, u, spi.URL{})
	if err != nil {
		return false, nil, err
	}
	ready := ref.WaitReady(ctx)
	v, err := ref.Invoke(spi.ReceiveAttachments(ctx, att), kernel.HealthCheck, service)
	return ready, v, err
}

// httpPortHint returns err with a hint when addr answers HTTP: the address
// of an HTTP server (serve --metrics's, say) given for a provider's.
// Asked only after the probe failed unanswered or unconnected
// (CHANNEL_INACTIVE, a timeout), and within what is left of ctx (the
// probe's own deadline), so it never lengthens the probe; a provider that
// answered is never sent HTTP.
func httpPortHint(ctx context.Context, addr string, err error) error {
	switch spi.StatusOf(err) {
	case spi.StatusChannelInactive, spi.StatusClientTimeout, spi.StatusServerTimeout:
	default:
		return err
	}
	if ctx.Err() != nil {
		return err
	}
	req, rerr := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/", nil)
	if rerr != nil {
		return err
	}
	req.Close = true // a one-off request: leave no idle connection behind
	resp, rerr := http.DefaultClient.Do(req)
	if rerr != nil {
		return err
	}
	resp.Body.Close()
	var se *spi.Error
	if !errors.As(err, &se) {
		return err
	}
	hinted := *se
	hinted.Message += fmt.Sprintf("; %s answers HTTP (%s): it is an HTTP port, such as serve --metrics's; give the provider's RPC address (serve --listen)", addr, resp.Status)
	return &hinted
}
