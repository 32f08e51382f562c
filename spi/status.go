package spi

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Status is the one-byte outcome carried in a response frame. The numbers are
// Apache Dubbo's (org.apache.dubbo.remoting.exchange.Response), so operators
// who know Dubbo read them without a table.
type Status uint8

// Status codes, as Dubbo numbers them.
const (
	StatusOK                        Status = 20
	StatusSerializationError        Status = 25
	StatusClientTimeout             Status = 30
	StatusServerTimeout             Status = 31
	StatusChannelInactive           Status = 35
	StatusBadRequest                Status = 40
	StatusBadResponse               Status = 50
	StatusServiceNotFound           Status = 60
	StatusServiceError              Status = 70
	StatusServerError               Status = 80
	StatusClientError               Status = 90
	StatusServerThreadpoolExhausted Status = 100
)

var statusNames = map[Status]string{
	StatusOK:                        "OK",
	StatusSerializationError:        "SERIALIZATION_ERROR",
	StatusClientTimeout:             "CLIENT_TIMEOUT",
	StatusServerTimeout:             "SERVER_TIMEOUT",
	StatusChannelInactive:           "CHANNEL_INACTIVE",
	StatusBadRequest:                "BAD_REQUEST",
	StatusBadResponse:               "BAD_RESPONSE",
	StatusServiceNotFound:           "SERVICE_NOT_FOUND",
	StatusServiceError:              "SERVICE_ERROR",
	StatusServerError:               "SERVER_ERROR",
	StatusClientError:               "CLIENT_ERROR",
	StatusServerThreadpoolExhausted: "SERVER_THREADPOOL_EXHAUSTED",
}

// String returns the Dubbo name of s (e.g. "SERVER_TIMEOUT"), or
// "STATUS_<n>" for a number Dubbo does not define.
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return "STATUS_" + strconv.Itoa(int(s))
}

// Known reports whether s is one of the defined status codes.
func (s Status) Known() bool {
	_, ok := statusNames[s]
	return ok
}

// ParseStatus maps a status name ("SERVER_TIMEOUT") back to its code.
func ParseStatus(name string) (Status, bool) {
	for s, n := range statusNames {
		if n == name {
			return s, true
		}
	}
	return 0, false
}

// Error is the error every layer returns when a call fails: the wire status,
// a human message, and optionally the cause. The consumer rebuilds it from the
// response frame, so callers match on Status with errors.As or errors.Is,
// never on message text.
//
//	var e *spi.Error
//	if errors.As(err, &e) && e.Status == spi.StatusServerTimeout { ... }
//	if errors.Is(err, spi.ErrServerTimeout) { ... }
//
// An error that wraps an *Error (fmt.Errorf("auth: %w", e), returned by
// a filter, a cluster, or a method) has e's status, and its own text as
// the message: the kernel's Reference returns a consumer filter's
// wrapper as FromError gives it, an *Error of e's status reading
// "SERVICE_ERROR: auth: boom" (the status once, the wrapper's context
// kept) whose Cause is the wrapper, so `airnode call` prints that
// "STATUS: message" line and bench counts it under e's status; a
// method's wrapper crosses the wire so (MethodError). This is gRPC's
// rule: status.FromError (grpc-go 1.55 and later) takes the code of the
// status an error wraps and the wrapper's whole text as the message.
type Error struct {
	Status  Status // the wire status: what callers and clusters act on
	Message string // for humans: never matched on
	Cause   error  // what Unwrap returns (nil: none); a provider's stays on the provider
	// Provider is, on the consumer, the address (host:port) of the
	// provider whose invoker gave this error, the last one tried after a
	// failover (Result.ProviderAddr): the kernel's Reference sets it on
	// the error a call returns. "" when no provider was called (none
	// available, a call refused on the consumer), and on the provider.
	// Not part of Error's text, which the message makes: a caller that
	// reports the error names it (`airnode call` does, once).
	Provider string
}

// FromError returns the *Error that err carries, as callers are to see
// it: err itself when it is an *Error; when err wraps one (a filter's
// fmt.Errorf("auth: %w", e)), a new *Error with e's Status and Provider
// whose Message is err's whole text with e's status name said once
// ("auth: boom", rendered "SERVICE_ERROR: auth: boom"; a bare sentinel's
// wrapper, fmt.Errorf("auth: %w", ErrBadRequest), is "auth", rendered
// "BAD_REQUEST: auth"), and err as its Cause, so that errors.Is and errors.As match as they did on err. It
// returns nil and false when err carries no *Error (nil included; a nil
// *Error in err's chain counts as none). This is gRPC's rule for
// status.FromError since grpc-go 1.55: the wrapped status's code, the
// wrapper's whole text as the message.
func FromError(err error) (*Error, bool) {
	var se *Error
	if !errors.As(err, &se) || se == nil {
		return nil, false
	}
	if se == err {
		return se, true
	}
	return &Error{Status: se.Status, Message: statusOnce(err.Error(), se), Cause: err, Provider: se.Provider}, true
}

// Errorf returns an *Error with status s and a formatted message. A %w verb
// in format becomes the Cause. When the Cause carries an *Error of the same
// status, its text enters the message without its status name, which the
// result renders once: Errorf(StatusBadRequest, "place: %w",
// Errorf(StatusBadRequest, "bad sku")) says "BAD_REQUEST: place: bad sku".
func Errorf(s Status, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	cause := errors.Unwrap(err)
	msg := err.Error()
	var inner *Error
	if cause != nil && errors.As(cause, &inner) && inner != nil && inner.Status == s {
		msg = statusOnce(msg, inner)
	}
	return &Error{Status: s, Message: msg, Cause: cause}
}

// statusOnce returns msg, the text of an error that wraps inner, with
// inner's own rendering ("BAD_REQUEST: bad sku") replaced by its message
// ("bad sku"), once: for an *Error of inner's status built around msg,
// whose Error() adds the status name itself. An inner with no message (a
// sentinel such as ErrBadRequest, rendered "BAD_REQUEST") is left out
// with the ": " that joins it to the wrapper's text (bareStatusOut). msg
// is returned unchanged when inner's rendering is not in msg.
func statusOnce(msg string, inner *Error) string {
	if inner.Message == "" {
		return bareStatusOut(msg, inner.Status.String())
	}
	full := inner.Error()
	if full == inner.Message {
		return msg // inner's message already starts with its name
	}
	return strings.Replace(msg, full, inner.Message, 1)
}

// bareStatusOut returns msg, the text of an error that wraps a bare
// status whose rendering is name ("BAD_REQUEST"), without the last
// occurrence of name as a whole word and one ": " joining it to the rest:
// "auth: BAD_REQUEST" is "auth" (fmt.Errorf("auth: %w", ErrBadRequest)),
// "auth: BAD_REQUEST: tenant" is "auth: tenant", "BAD_REQUEST" alone is
// "". msg is returned unchanged when name is not a word of it or stands
// joined by no ": " ("auth (BAD_REQUEST)").
func bareStatusOut(msg, name string) string {
	i := strings.LastIndex(msg, name)
	for i > 0 && wordByte(msg[i-1]) {
		i = strings.LastIndex(msg[:i], name)
	}
	end := i + len(name)
	switch {
	case i < 0 || end < len(msg) && wordByte(msg[end]):
		return msg
	case msg == name:
		return ""
	case strings.HasPrefix(msg[end:], ": "):
		return msg[:i] + msg[end+2:]
	case end == len(msg) && strings.HasSuffix(msg[:i], ": "):
		return msg[:i-2]
	}
	return msg
}

// wordByte reports whether c can be part of a status name's word.
func wordByte(c byte) bool {
	return c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}

// Error renders "STATUS_NAME: message", the name once: a Message that
// already starts with "STATUS_NAME: " is rendered as it is.
func (e *Error) Error() string {
	name := e.Status.String()
	if e.Message == "" {
		return name
	}
	if len(e.Message) > len(name)+1 && e.Message[len(name)] == ':' && e.Message[len(name)+1] == ' ' && strings.HasPrefix(e.Message, name) {
		return e.Message
	}
	return name + ": " + e.Message
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Cause }

// Is makes errors.Is(err, ErrX) true for any *Error with the same status as
// the sentinel ErrX, whatever its message.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Cause == nil && t.Status == e.Status
}

// Sentinels for errors.Is; they match any *Error with the same Status.
var (
	ErrSerialization             = &Error{Status: StatusSerializationError}
	ErrClientTimeout             = &Error{Status: StatusClientTimeout}
	ErrServerTimeout             = &Error{Status: StatusServerTimeout}
	ErrChannelInactive           = &Error{Status: StatusChannelInactive}
	ErrBadRequest                = &Error{Status: StatusBadRequest}
	ErrBadResponse               = &Error{Status: StatusBadResponse}
	ErrServiceNotFound           = &Error{Status: StatusServiceNotFound}
	ErrServiceError              = &Error{Status: StatusServiceError}
	ErrServerError               = &Error{Status: StatusServerError}
	ErrClientError               = &Error{Status: StatusClientError}
	ErrServerThreadpoolExhausted = &Error{Status: StatusServerThreadpoolExhausted}
)

// ErrRequestSent is the Cause of a CHANNEL_INACTIVE error whose request
// had been handed to the transport before the connection died: the
// provider may have received and run it, so running it elsewhere may run it
// twice. errors.Is(err, ErrRequestSent) tells it from a CHANNEL_INACTIVE
// whose request was never sent (safe to retry); the failover cluster
// retries it only for idempotent methods, as it does SERVER_TIMEOUT.
var ErrRequestSent = errors.New("the request had been sent, so the provider may have run it")

// ErrEncodeTimedOut is the Cause of the CLIENT_TIMEOUT of a call whose
// request took the whole of its timeout to encode on the consumer (a body
// of tens of MiB): nothing was sent, but encoding it again for another
// provider would take as long, so the failover cluster does not retry it,
// as it does not retry other failures of the consumer's own (a
// SERIALIZATION_ERROR).
var ErrEncodeTimedOut = errors.New("the request took the call's whole timeout to encode on the consumer")

// ErrNotConnected is in the Cause chain of the CHANNEL_INACTIVE error of a
// call to a provider this process cannot connect to (a failed dial, TLS
// handshake or first ping): nothing was sent, and the kernel redials such
// a provider at most every 500 ms, so the same provider asked again at
// once gives the same error back. The failover cluster retries the call
// on other providers only (without it, a provider it could not connect
// to took all three attempts: "3 attempts on [A, A, A]").
var ErrNotConnected = errors.New("not connected to the provider")

// ErrGoAway is in the Cause chain of the CHANNEL_INACTIVE error of a call
// that a provider's go-away kept from running: the provider said it is
// shutting down (its drain ended) and runs no request it reads after that
// on the connection, so nothing ran and the call is safe to retry on
// another provider, never on that one until it reconnects. The kernel
// leaves such a provider out of selection while another provider can take
// the call; when every provider said go-away the call fails once with this
// cause, naming them, instead of spinning retries. The failover cluster
// does not retry a provider whose failure has it (Repeats). It wraps
// ErrProviderShutdown: errors.Is(err, ErrProviderShutdown) is true too.
var ErrGoAway error = goAwayError{}

// goAwayError is ErrGoAway's type: its text, and ErrProviderShutdown
// beneath it.
type goAwayError struct{}

func (goAwayError) Error() string {
	return "the provider said go-away: it is shutting down and runs no new call on this connection"
}

func (goAwayError) Unwrap() error { return ErrProviderShutdown }

// ErrProviderShutdown is in the Cause chain of a failure that says its
// provider is shutting down, so that asking it again in the same call is
// useless: its go-away (ErrGoAway, which wraps this: the call did not
// run), and the SERVER_ERROR "provider ... shut down: ... the call was
// abandoned" of a call its shutdown timeout cut short (it did run: the
// status says so; a consumer sets this cause on such an answer read after
// the provider's go-away, which the provider sends before it abandons its
// calls). The failover cluster does not ask that provider again in the
// call (Repeats): it retries another one, or fails.
var ErrProviderShutdown = errors.New("the provider is shutting down")

// ErrAccessDenied is the Cause of the error a provider's access-control
// filter (the token filter: a wrong or missing token) answers a call with,
// before the service runs. The status stays the one on the wire
// (BAD_REQUEST for the token filter: the Cause does not cross the wire),
// but the provider's metrics filter counts such a call as rejected (the
// token filter's process-wide counter, "rejected before the service" in
// airnode stats), not as a call or failure of the method: a caller without
// the secret says nothing about the service's health.
var ErrAccessDenied = errors.New("access denied before the service ran")

// StatusOf returns the status of err: StatusOK for nil, the Status of the
// first *Error in its chain, and StatusClientError for any other error.
func StatusOf(err error) Status {
	if err == nil {
		return StatusOK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return StatusClientError
}

// MethodError is the error a provider answers for err, returned by method
// of service after it ran (a Go method, a plugin service's method): an
// error carrying no *Error becomes SERVICE_ERROR with its message. An *Error (or an error wrapping one) keeps its status when
// that status says nothing about whether the method ran, or says it ran:
// SERVICE_ERROR, SERVER_ERROR, BAD_REQUEST, BAD_RESPONSE,
// SERIALIZATION_ERROR and SERVER_TIMEOUT (failover retries the last only
// for idempotent methods). Any other status (SERVICE_NOT_FOUND,
// SERVER_THREADPOOL_EXHAUSTED, CLIENT_TIMEOUT, CLIENT_ERROR,
// CHANNEL_INACTIVE, an undefined one) would tell the consumer the call did
// not run, and failover would run it again elsewhere: it becomes
// SERVICE_ERROR "<service>.<method> returned <STATUS>: <message>", the
// returned error kept as the Cause for the provider's filters. Typically
// the method returned the error of its own downstream call. gRPC does the
// same: a server's outgoing-call status is not its own (it becomes
// Unknown); in Dubbo such an error is a business exception, never retried.
//
// A nil pointer returned as a non-nil error (the classic Go mistake: a
// func returning error that returns a nil *MyErr variable) is
// SERVICE_ERROR "<service>.<method> returned a nil *pkg.MyErr as a
// non-nil error": the method ran and said it failed, so the status is
// the one of any error it returns; the message names the mistake rather
// than the panic its Error method would raise. A nil *Error, airnode's own
// type, is no error: MethodError returns nil for it, and the caller
// answers the method's result. An error that wraps an *Error that passes
// through (fmt.Errorf("place: %w", Errorf(StatusBadRequest, "bad sku")))
// becomes an *Error of that status whose message names it once ("place:
// bad sku", rendered "BAD_REQUEST: place: bad sku"), err its Cause, so
// errors.Is and errors.As match as they did on err.
func MethodError(service, method string, err error) error {
	if se, ok := err.(*Error); ok && se == nil {
		return nil
	}
	if typ, ok := nilPointer(err); ok {
		return &Error{Status: StatusServiceError, Message: fmt.Sprintf("%s.%s returned a nil %s as a non-nil error", service, method, typ)}
	}
	var se *Error
	if !errors.As(err, &se) || se == nil {
		return &Error{Status: StatusServiceError, Message: err.Error(), Cause: err}
	}
	if passesThrough(se.Status) {
		e, _ := FromError(err)
		return e
	}
	msg := err.Error()
	if name := se.Status.String(); !strings.Contains(msg, name) {
		msg = name + ": " + msg
	}
	return &Error{Status: StatusServiceError, Message: fmt.Sprintf("%s.%s returned %s", service, method, msg), Cause: err}
}

// nilPointer reports whether err is a nil value of a pointer (or map,
// slice, func, chan) type in a non-nil error interface, and names the
// type ("*main.MyErr").
func nilPointer(err error) (string, bool) {
	v := reflect.ValueOf(err)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if v.IsNil() {
			return v.Type().String(), true
		}
	}
	return "", false
}

// passesThrough reports whether status s, returned by a method, reaches
// its consumer unchanged (MethodError).
func passesThrough(s Status) bool {
	switch s {
	case StatusServiceError, StatusServerError, StatusBadRequest, StatusBadResponse,
		StatusSerializationError, StatusServerTimeout:
		return true
	}
	return false
}
