package spi

import (
	"context"
	"reflect"
	"time"
)

// Side says which end of a call a URL, filter or channel belongs to.
type Side string

// The two sides.
const (
	Consumer Side = "consumer"
	Provider Side = "provider"
)

// Invocation is one call: the method, its arguments and its attachments
// (string key/value metadata that travels with the request, like gRPC
// metadata or Dubbo attachments).
//
// An Invocation belongs to one call; filters may modify it before passing it
// on, but must not retain it after the call returns.
type Invocation struct {
	// Service is the service key, "group/interface:version".
	Service string
	// Method is the method name as exported ("Echo").
	Method string
	// Args are the arguments in order. On the provider they are decoded into
	// the method's parameter types.
	Args []any
	// ArgTypes are, on the provider of a service exported from Go
	// methods, the method's parameter types after the context, in order
	// (Args were decoded into them): shared, read-only. nil on the
	// consumer and for a service without them (a plugin's service, a
	// generic one). A filter that replaces arguments it received in
	// another form (a filter plugin's, as JSON) converts them into these.
	ArgTypes []reflect.Type
	// Attachments are string metadata; nil when there are none.
	Attachments map[string]string
	// Reply, when non-nil on the consumer, is a pointer the response value is
	// decoded into (like net/rpc's reply); when nil the value is decoded into
	// a generic any (maps, slices, strings, numbers).
	Reply any
	// Began is, on the provider, the Mono reading taken when the provider
	// began handling the request (read from the connection, or taken by a
	// worker after waiting for one): filters and invokers that time the
	// call count from it rather than reading the clock again, so their
	// times include the arguments' decoding. 0 when unknown (on the
	// consumer, and for an invocation built by hand): read the clock.
	Began time.Duration
	// Due is, on the provider, the Mono reading at which the consumer's
	// deadline passes: when the exchange read the request plus the
	// remaining timeout the request carried. A result ready at or after
	// Due is not sent (the consumer is answered SERVER_TIMEOUT), so a
	// filter that counts outcomes (metrics) counts such a call as
	// SERVER_TIMEOUT, comparing Result.Ended with Due. What it cannot
	// include: the time the request spent in the consumer's queue and on
	// the network before it was read. 0 when the request had no deadline
	// (and on the consumer, and for an invocation built by hand).
	Due time.Duration
	// RequestID is, on the provider, the id the consumer gave the request
	// on its connection (the wire header's), and Local the provider's own
	// address on that connection ("host:port"): with the "remote"
	// attachment, the consumer's end, they name the exchange, and the
	// consumer's Result.RequestID and Result.Local name the same one (the
	// accesslog lines of both sides print them). 0 and "" on the consumer
	// and for an invocation built by hand.
	RequestID uint64
	Local     string // the provider's "host:port" on the request's connection (see RequestID)
	// ConsumerApplication is, on the provider, the consumer's application
	// name (its URL key "application"), which the consumer sends once per
	// connection, in its first ping's hello: "" for a consumer that sent
	// none (one older than it), on the consumer, and for an invocation
	// built by hand. The accesslog prints it as consumer_application.
	ConsumerApplication string
}

// Attachment returns the attachment key, or "".
func (inv *Invocation) Attachment(key string) string { return inv.Attachments[key] }

// SetAttachment sets an attachment, allocating the map on first use.
func (inv *Invocation) SetAttachment(key, value string) {
	if inv.Attachments == nil {
		inv.Attachments = make(map[string]string, 4)
	}
	inv.Attachments[key] = value
}

// Attachment keys the kernel itself uses.
const (
	// AttachmentTimeout, given by a caller (WithAttachments), is that
	// call's timeout per attempt in place of the reference's "timeout"
	// URL key, in the same syntax (Dubbo's per-call RpcContext timeout);
	// the context's deadline still bounds the call. The provider does not
	// see it: the deadline travels in the request preamble
	// (kernel/protocol), and the provider's handler sees it as its
	// context's deadline.
	AttachmentTimeout = "timeout"
	// AttachmentToken carries the provider access token.
	AttachmentToken = "token"
	// AttachmentRemote is set by the provider to the consumer's address.
	AttachmentRemote = "remote"
)

// Result is the outcome of an Invoke: a value or an error (an *Error for
// anything that crossed the wire), plus attachments from the provider.
type Result struct {
	// Value is the method's result (nil for a method that returns only an
	// error, and when Err is set).
	Value any
	// Err is the failure the caller gets; nil on success.
	Err error
	// Attachments are the provider's response attachments; nil when there
	// are none.
	Attachments map[string]string
	// Swallowed is a failure that a cluster absorbed (failsafe: Dubbo's
	// FailsafeClusterInvoker) and hid from the caller, who gets this
	// Result with Err nil and a zero Value. Filters above the cluster read
	// it (the consumer's accesslog line says status=SERVICE_ERROR
	// swallowed=true rather than OK); the kernel ignores it. nil otherwise.
	Swallowed error
	// ProviderAddr is, on the consumer, the address (host:port, as the
	// provider URL names it) of the provider whose invoker produced this
	// Result: the kernel's remote invoker sets it on every Result it
	// returns, so that a filter above the cluster (accesslog) can say
	// which provider a call went to, the last one tried after a failover.
	// "" when no provider was called (none available, a refused call),
	// and on the provider.
	ProviderAddr string
	// Ended is the Mono reading taken when the innermost layer that timed
	// the call saw it end: the kernel's remote invoker on the consumer,
	// its local invoker on the provider. A filter timing the call takes
	// it as the call's end rather than reading the clock again (its time
	// then leaves out the work of the filters between it and that layer
	// after the call returned, a few hundred nanoseconds). 0 when no
	// layer timed it (a filter that answered without calling on, a
	// failsafe cluster's swallowed failure, a plugin's result): read the
	// clock. Meaningless in another process.
	Ended time.Duration
	// RequestID is, on the consumer, the id of the request the call's last
	// attempt sent on its connection (the wire header's), and Local this
	// end's address on that connection ("host:port", what the provider
	// logs as "remote"): the provider's Invocation.RequestID and
	// Invocation.Local name the same exchange, so a consumer's accesslog
	// line and its provider's can be paired. Set by the kernel's exchange
	// on every Result of a request it numbered, failed ones included (an
	// id the provider never logged was not sent). 0 and "" when no
	// request was made (no provider, a call refused on the consumer), and
	// on the provider.
	RequestID uint64
	Local     string // this consumer's "host:port" on the last attempt's connection (see RequestID)
}

// Invoker is anything that can invoke: a remote provider, a cluster over a
// directory of them, or a local service implementation on the provider.
type Invoker interface {
	// URL is the invoker's URL: for a remote provider, the provider URL
	// merged with the consumer's (see MergeURL).
	URL() URL
	// Invoke performs the call. It blocks until the result is known or ctx
	// ends, and is called concurrently. Failures are reported in Result.Err,
	// never by panicking.
	Invoke(ctx context.Context, inv *Invocation) Result
	// Available reports whether the invoker can take calls now (a remote
	// provider that is reconnecting is not available). Never blocks.
	Available() bool
	// Stats returns the live statistics the kernel keeps for this invoker;
	// load balancers read them. Never nil for remote invokers.
	Stats() *Stats
	// Close releases the invoker; it is idempotent.
	Close() error
}

// InvokerFunc is a generic provider written as one function, as Dubbo's
// GenericService is one method ($invoke): kernel.Node.ExportInvoker
// serves it, passing every call of the service key with its method name,
// generic arguments (maps, slices, strings, numbers) and attachments, and
// answering its Result (Err an *Error for a status other than
// SERVICE_ERROR). As an Invoker it has the zero URL, is always Available,
// has no Stats (nil: the provider side reads none, but a consumer's load
// balancers do, so it is not meant for a directory) and Close does
// nothing.
//
//	node.ExportInvoker(ctx, spi.MustParse("airnode://127.0.0.1:20880/gen.Svc"),
//		spi.InvokerFunc(func(ctx context.Context, inv *spi.Invocation) spi.Result {
//			return spi.Result{Value: map[string]any{"method": inv.Method, "args": inv.Args}}
//		}))
type InvokerFunc func(ctx context.Context, inv *Invocation) Result

// URL returns the zero URL.
func (InvokerFunc) URL() URL { return URL{} }

// Invoke calls f.
func (f InvokerFunc) Invoke(ctx context.Context, inv *Invocation) Result { return f(ctx, inv) }

// Available returns true.
func (InvokerFunc) Available() bool { return true }

// Stats returns nil: an InvokerFunc keeps no statistics.
func (InvokerFunc) Stats() *Stats { return nil }

// Close does nothing and returns nil.
func (InvokerFunc) Close() error { return nil }

var _ Invoker = InvokerFunc(nil)
