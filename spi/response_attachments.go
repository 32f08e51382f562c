package spi

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Attachments sent back with an answer: what a Go provider method adds to
// its response, and what a Go caller reads of it, as gRPC's
// grpc.SetHeader / grpc.Header call option and Dubbo 2.7's server context
// (RpcContext.getServerContext). They ride the response's attachments
// (docs/wire.md), which a provider filter can also set in
// Result.Attachments and a consumer filter reads there.

// ResponseAttachmentsKey is the context key SetResponseAttachments asks
// for: a provider call's context answers it with a ResponseAttachmentSetter
// (the kernel's does).
type ResponseAttachmentsKey struct{}

// ResponseAttachmentSetter is what a provider call's context gives
// SetResponseAttachments: it keeps every key and value of kv (alternating,
// already checked) for the call's answer, or none of them: it returns an
// error, setting nothing, once the answer has been sent, or when the
// answer would carry more attachments than a consumer accepts (a key set
// again counts once). It may be called concurrently and does not block.
type ResponseAttachmentSetter interface {
	SetResponseAttachments(kv []string) error
}

// ErrNotProviderCall is SetResponseAttachments' error for a context that
// is not a provider call's (a method called directly, or a context made
// with context.Background).
var ErrNotProviderCall = errors.New("spi: not a provider call's context: SetResponseAttachments works with the context an airnode provider gives a method it runs")

// SetResponseAttachments adds kv, alternating keys and values
// ("server-timing", "db;dur=12", "cursor", "c42"), to the attachments the
// answer of the call served with ctx carries back to its consumer; a later
// value of a key replaces an earlier one, and a provider filter's
// Result.Attachments win over the method's on the same key (the method's
// are added after the filters ran). Call it before the method returns: the
// answer is sent then, and a later call returns an error. It returns an
// error, setting nothing, for an odd number of kv, an empty key, a key the
// kernel reserves (ReservedAttachment, or one starting "biz.", which
// carries a BizError), a ctx that is not a provider call's
// (ErrNotProviderCall), or keys that would take the answer over the
// attachments a consumer accepts (4096 in all with the kernel's provider,
// counting those set before; docs/wire.md). The consumer gets them with
// ReceiveAttachments.
func SetResponseAttachments(ctx context.Context, kv ...string) error {
	if len(kv)%2 == 1 {
		return fmt.Errorf("spi: SetResponseAttachments: odd number of arguments (%d): want key, value pairs", len(kv))
	}
	for i := 0; i < len(kv); i += 2 {
		switch k := kv[i]; {
		case k == "":
			return errors.New("spi: SetResponseAttachments: an empty key: every attachment needs a key")
		case ReservedAttachment(k):
			return fmt.Errorf("spi: SetResponseAttachments: key %q is reserved by the kernel (reserved: %s)", k, ReservedAttachments())
		case strings.HasPrefix(k, BizAttachmentPrefix):
			return fmt.Errorf("spi: SetResponseAttachments: key %q: keys starting %q carry a BizError in an answer: return a *spi.BizError instead", k, BizAttachmentPrefix)
		}
	}
	s, ok := ctx.Value(ResponseAttachmentsKey{}).(ResponseAttachmentSetter)
	if !ok {
		return ErrNotProviderCall
	}
	return s.SetResponseAttachments(kv)
}

type receiveAttachmentsKey struct{}

// ReceiveAttachments returns a context under which a call made with the
// kernel's Reference (Call, Invoke, a Bind stub) stores in *dst the
// attachments its answer carried (nil when none), as gRPC's grpc.Header
// call option fills a metadata.MD: set by the provider's method
// (SetResponseAttachments) or filters, or by a provider in another
// language. *dst is set when the call returns, failed calls included
// (an answer's attachments come with its error too; nil when no answer
// came). Give each concurrent call its own dst. The map is the call's:
// the caller may keep and modify it.
func ReceiveAttachments(ctx context.Context, dst *map[string]string) context.Context {
	return context.WithValue(ctx, receiveAttachmentsKey{}, dst)
}

// AttachmentsReceiver returns the dst ReceiveAttachments put on ctx, or
// nil. The kernel's Reference calls it once per call.
func AttachmentsReceiver(ctx context.Context) *map[string]string {
	p, _ := ctx.Value(receiveAttachmentsKey{}).(*map[string]string)
	return p
}
