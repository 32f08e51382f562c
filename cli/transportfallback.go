package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// The one retry over the other bundled transport that health, call and
// bench make for a direct address (no registry, whose provider URLs name
// their transport) when the user named no transport: a provider serving
// --transport tcp closes the default smux connection at its first ping
// (kernel.ErrClosedAtFirstPing), which a gRPC user giving host:port
// should not have to decode. With the transport named (-p, the URL, the
// configuration, the environment) nothing is guessed, and the error is
// cut to what happened, the likely cause and the flag to try
// (mismatchError).

// otherTransport returns the bundled transport to retry over when the
// provider at u closed the connection at its first ping: tcp for the
// default smux. "" when u sets its transport (-p transport=NAME, the
// URL's query, the configuration's reference or consumer keys, the
// environment): then nothing is guessed.
func otherTransport(u spi.URL) string {
	if _, set := u.Param("transport"); set {
		return ""
	}
	return tcp.Name
}

// overOtherTransport makes that retry when err, the first try's over u
// (a direct address), is the first-ping close and u names no transport
// (otherTransport), and ctx, the call's (its deadline the call's
// timeout, when it has one), is not done: when it was interrupted, err is
// returned as is. When less of ctx's time is left than the first try
// took (took: since it began to connect), the retry's connection, which
// is likely to take as long, would start with no time for it: none is
// started, and err is returned saying so (noTimeForRetry). try connects over the URL it is
// given and reports whether its connection came up, and its own error
// (nil, or the call's, which the provider answered). It returns the URL
// that answered (u when there was no retry or the retry did not
// connect), whether that is the retry's, and the error: the retry's
// (nil, or the provider's answer) when the retry connected, else err
// with what the retry met (retriedError). When the retry
// connected it writes one warning line on stderr saying which transport
// answered and how to skip the first try.
func overOtherTransport(ctx context.Context, took time.Duration, command string, u spi.URL, err error, try func(spi.URL) (bool, error), stderr io.Writer, logFormat string) (spi.URL, bool, error) {
	other := otherTransport(u)
	if err == nil || other == "" || !errors.Is(err, kernel.ErrClosedAtFirstPing) {
		return u, false, err
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return u, false, err
	}
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); left < took || ctx.Err() != nil {
			return u, false, noTimeForRetry(err, u, other, took, max(left, 0))
		}
	}
	ou := u.With("transport", other)
	connected, rerr := try(ou)
	if !connected {
		if rerr == nil {
			rerr = errors.New("no connection")
		}
		return u, false, retriedError(err, u, other, rerr)
	}
	msg := fmt.Sprintf("%s closed a transport=%s connection (the default) at its first ping and answered over transport=%s: give -p transport=%s to skip the first try",
		u.Address(), smux.Name, other, other)
	// the transport in the JSON record only: the text line says it
	stderrLine(stderr, logFormat, slog.LevelWarn, command, "airnode: "+command+": warning: "+msg, command+": "+msg, "transport", other)
	return ou, true, rerr
}

// retriedError is the first try's error err (the first-ping close of
// the default transport at u) once the retry over transport other failed
// too (rerr), cut to one short line in err's status: both tries failed,
// the retry's cause first, then the likely reason when both closed at
// the first ping (TLS on the provider, or no airnode provider there) and
// the tls keys to try. The chain (errors.Is, the provider) is err's.
func retriedError(err error, u spi.URL, other string, rerr error) error {
	return cutError(err, u, func(addr string) string {
		if errors.Is(rerr, kernel.ErrClosedAtFirstPing) {
			return fmt.Sprintf("%s closed the connection at its first ping over both transports, transport=%s (the retry) and transport=%s (the default): likely %s or not an airnode provider",
				addr, other, smux.Name, tlsReason(u))
		}
		return fmt.Sprintf("%s failed over both transports: transport=%s (the retry): %v; transport=%s (the default): closed the connection at its first ping",
			addr, other, rerr, smux.Name)
	})
}

// noTimeForRetry is the first try's error err (the first-ping close of
// the default transport at u, which took took) when only left remained
// of the call's timeout, too little for a retry over transport other:
// cut to one line in err's status saying so, with the likely causes and
// what to try. The chain (errors.Is, the provider) is err's.
func noTimeForRetry(err error, u spi.URL, other string, took, left time.Duration) error {
	return cutError(err, u, func(addr string) string {
		return fmt.Sprintf("%s closed the connection at its first ping over transport=%s (the default) after %v, and no time was left for a retry over transport=%s (%v of the call's timeout left, less than the first try took): likely a transport mismatch (try -p transport=%s) or %s or not an airnode provider",
			addr, smux.Name, took.Round(time.Millisecond), other, left.Round(time.Millisecond), other, tlsReason(u))
	})
}

// cutError returns err with its *spi.Error replaced by one line in its
// status, text(addr), addr the provider it names, else u's address;
// err itself when it holds no *spi.Error. The chain (errors.Is, the
// provider) is err's.
func cutError(err error, u spi.URL, text func(addr string) string) error {
	var se *spi.Error
	if !errors.As(err, &se) {
		return err
	}
	addr := u.Address()
	if se.Provider != "" {
		addr = se.Provider
	}
	short := spi.Errorf(se.Status, "%s", text(addr))
	short.Cause, short.Provider = err, se.Provider
	return replaceError(err, se, short)
}

// tlsReason is the TLS half of the likely reason a provider closed a
// consumer's connection at its first ping, with what to try: the tls
// keys when u (the consumer's URL) has none, else that they must match.
func tlsReason(u spi.URL) string {
	if v, _ := u.Param("tls"); v == "true" {
		return "a TLS mismatch (the tls keys must match the provider's)"
	}
	return "TLS on the provider (try -p tls=true -p tls.ca=FILE)"
}

// replaceError returns err with its *spi.Error se replaced by repl: repl
// itself when err is se, else the text err wrapped se in ("no provider
// of demo.Echo available: ") before repl, when err's text ends with se's;
// else repl.
func replaceError(err error, se, repl *spi.Error) error {
	if prefix, ok := strings.CutSuffix(err.Error(), se.Error()); ok && prefix != "" {
		return fmt.Errorf("%s%w", prefix, repl)
	}
	return repl
}

// mismatchError returns err cut to its essentials when it is the
// first-ping close (kernel.ErrClosedAtFirstPing) of a consumer at u whose
// transport was named (by says where: "-p transport=smux", the
// configuration's key...), so that no retry was made: which provider
// closed the connection, the likely cause, and the -p transport= to try.
// The chain (errors.Is, the provider) is err's. Any other err is
// returned as is.
func mismatchError(err error, u spi.URL, by string) error {
	name, set := u.Param("transport")
	if err == nil || !set || !errors.Is(err, kernel.ErrClosedAtFirstPing) {
		return err
	}
	try := "-p transport=NAME, the provider's"
	switch name {
	case smux.Name:
		try = "-p transport=" + tcp.Name
	case tcp.Name:
		try = "-p transport=" + smux.Name
	}
	addr := u.Address()
	var se *spi.Error
	if errors.As(err, &se) && se.Provider != "" {
		addr = se.Provider
	}
	if by != "" {
		by = ", from " + by
	}
	short := spi.Errorf(spi.StatusChannelInactive, "%s closed the connection at its first ping: likely a transport mismatch (this consumer's transport=%s%s; try %s) or %s",
		addr, name, by, try, tlsReason(u))
	short.Cause = err
	if se == nil {
		return short
	}
	short.Provider = se.Provider
	return replaceError(err, se, short)
}

// transportSource says where the transport of call's or bench's
// consumer of arg (SERVICE_URL) was named, for mismatchError: as the
// command line gave it (given: "-p transport=smux", "SERVICE_URL key
// transport=smux"), else keySource's "config references[N].params",
// "config consumer.transport" or "env AIRNODE_CONSUMER_TRANSPORT"; ""
// when none did.
func transportSource(given map[string]givenKey, cfg config.Config, arg string) string {
	if g, ok := given["transport"]; ok {
		return g.by
	}
	return keySource(cfg, arg, nil, "transport")
}
