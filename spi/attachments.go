package spi

import (
	"context"
	"fmt"
	"maps"
	"strings"
)

// Attachments in a context: what a Go consumer sends with a call and what a
// Go provider method receives, as gRPC's
// metadata.AppendToOutgoingContext / metadata.FromIncomingContext and
// Dubbo's RpcContext attachments. The two directions use different context
// keys, so a provider method that calls another service with its own ctx
// does not forward what it received (gRPC's rule): it forwards a key by
// putting it on the outgoing side again.

type outgoingAttachmentsKey struct{}

// IncomingAttachmentsKey is the context key IncomingAttachments asks
// for. A provider's own context type may answer it in its Value method
// (the kernel's does, to spare an allocation per call); others use
// WithIncomingAttachments.
type IncomingAttachmentsKey struct{}

// WithAttachments returns a context carrying the attachments of ctx (if
// any) merged with kv, alternating keys and values ("tenant", "x",
// "user", "alice"); a later value of a key replaces an earlier one. The
// kernel's Reference.Invoke and Reference.Call send them with every call
// made with the returned context (filters see them in
// Invocation.Attachments). AttachmentTimeout ("timeout", any case) is
// that call's timeout, as Dubbo's per-call RpcContext timeout: the
// Reference reads it as the URL key is read ("5s", or a bare number of
// milliseconds; no provider method receives it); a malformed value fails
// the call CLIENT_ERROR naming it. The other keys the kernel reserves
// (ReservedAttachment: remote, token) cannot be sent this way: such a
// call fails CLIENT_ERROR naming the key; so does a call with an empty
// key. It panics when kv has an odd length, as gRPC's metadata.Pairs
// does: that is a programming error.
func WithAttachments(ctx context.Context, kv ...string) context.Context {
	if len(kv)%2 == 1 {
		panic(fmt.Sprintf("spi: WithAttachments: odd number of arguments (%d): want key, value pairs", len(kv)))
	}
	old := OutgoingAttachments(ctx)
	m := make(map[string]string, len(old)+len(kv)/2)
	maps.Copy(m, old)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return context.WithValue(ctx, outgoingAttachmentsKey{}, m)
}

// OutgoingAttachments returns the attachments WithAttachments put on ctx,
// or nil. The map is shared by every context derived from ctx: read it,
// never modify it.
func OutgoingAttachments(ctx context.Context) map[string]string {
	m, _ := ctx.Value(outgoingAttachmentsKey{}).(map[string]string)
	return m
}

// WithIncomingAttachments returns ctx carrying att as the attachments of the
// call being served. The kernel calls it for a Go provider method that
// takes a context (the method reads them with IncomingAttachments); tests
// may call it to call such a method directly. att is not copied.
func WithIncomingAttachments(ctx context.Context, att map[string]string) context.Context {
	return context.WithValue(ctx, IncomingAttachmentsKey{}, att)
}

// IncomingAttachments returns the attachments of the call a provider is
// serving with ctx: those its consumer sent, after the provider filters
// (the token filter removes "token"), plus AttachmentRemote, the
// consumer's address, for a call that came over the network. nil when
// there are none (or ctx is not a provider call's). The map belongs to the
// call: read it during the call, copy what must outlive it, never modify
// it.
func IncomingAttachments(ctx context.Context) map[string]string {
	m, _ := ctx.Value(IncomingAttachmentsKey{}).(map[string]string)
	return m
}

// reservedAttachments are the attachment keys the kernel sets itself.
var reservedAttachments = []string{AttachmentRemote, AttachmentTimeout, AttachmentToken}

// ReservedAttachment reports whether key is an attachment key the kernel
// sets itself (AttachmentRemote, AttachmentTimeout, AttachmentToken), which
// no provider method receives from a consumer and a caller cannot send with
// WithAttachments or `airnode call -a`: a token comes from the
// reference's or the provider's "token" URL key, the consumer's address
// from the connection, the deadline from the context. The exception is a
// Go caller's AttachmentTimeout, which the kernel's Reference reads as the
// call's timeout (the provider drops it, as it drops every reserved key).
// The match ignores case ("Remote", "TIMEOUT" are reserved too), as gRPC
// metadata keys and HTTP header names do, so that a provider reading an
// attachment case-insensitively cannot be handed a forged "Remote".
// Other keys keep their case end to end (Dubbo's attachments are
// case-sensitive and "traceId" stays "traceId"): only the reserved check
// folds case.
func ReservedAttachment(key string) bool {
	for _, r := range reservedAttachments {
		if strings.EqualFold(key, r) {
			return true
		}
	}
	return false
}

// ReservedAttachments returns the reserved keys, sorted and comma-separated,
// for messages ("remote, timeout, token").
func ReservedAttachments() string { return strings.Join(reservedAttachments, ", ") }

// AttachmentGeneric marks a generic invocation: Dubbo's "generic"
// attachment, sent as "true" (GenericTrue). A generic call is one whose
// arguments were written out by hand or as maps — `airnode call`, which
// sends the mark on every call, or the kernel's Reference.Invoke given a
// map[string]any or an []any argument (a Go gateway relaying JSON), which
// sends it for such a call — rather than encoded from the consumer's own
// Go types. For such a call a
// provider refuses a map key that names no field of a struct parameter
// (BAD_REQUEST naming the key and listing the fields: a typo check); for
// any other call it ignores the key and logs it once, as Dubbo's Hessian2,
// protobuf and encoding/json ignore a field they do not know, so that
// consumers and providers can be upgraded in either order. It is not
// reserved: any other Go caller asks for the check with
// WithAttachments(ctx, AttachmentGeneric, GenericTrue), and an Invoke
// caller given "false" this way is not marked. Providers that
// predate it ignore it, as any attachment they do not read.
const AttachmentGeneric = "generic"

// GenericTrue is the value of AttachmentGeneric that marks a generic
// invocation (Dubbo's default generic mode, "true").
const GenericTrue = "true"

// GenericInvocation reports whether att marks a generic invocation:
// AttachmentGeneric is present with a value other than "" and "false"
// (case ignored), so that Dubbo's other generic modes ("bean",
// "nativejava", ...) count too. Reading a nil map is free.
func GenericInvocation(att map[string]string) bool {
	v, ok := att[AttachmentGeneric]
	return ok && v != "" && !strings.EqualFold(v, "false")
}
