package spi

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// BizError is a business error: what a provider method returns to tell
// its caller why a request was refused in the application's own terms,
// beyond the wire status, as gRPC's status details (errdetails.ErrorInfo:
// reason, domain, metadata) and Kitex's biz status errors (code, message,
// extra) do. The consumer gets it back with the same Code, Reason, Message
// and Details:
//
//	// provider
//	return spi.NewBizError(1001, "OUT_OF_STOCK", "sku A-1 is out of stock", map[string]string{"sku": "A-1"})
//	// consumer
//	var be *spi.BizError
//	if errors.As(err, &be) && be.Reason == "OUT_OF_STOCK" { ... be.Details["sku"] ... }
//
// The status stays what any error of the method gets (MethodError): a
// BizError alone is SERVICE_ERROR, and a method that wants another status
// that passes through wraps it, spi.Errorf(StatusBadRequest, "place: %w",
// be). On the consumer the call's error is an *Error of that status whose
// Cause is the BizError, so errors.As finds both, and StatusOf works as for
// any failure. Error() is Message alone, so a consumer that does not know
// BizError (an older airnode, another language) sees the text it would
// see for any error. The fields travel in the error response's attachments
// under keys starting "biz." (docs/wire.md); a call that succeeds carries
// nothing more.
type BizError struct {
	// Code is the application's numeric code (Kitex's biz status code; 0:
	// none).
	Code int
	// Reason is the application's symbolic code, e.g. "OUT_OF_STOCK"
	// (gRPC ErrorInfo's reason; "": none).
	Reason string
	// Message is for humans, as Error.Message: what Error() returns.
	Message string
	// Details are the application's key/value details (gRPC ErrorInfo's
	// metadata, Kitex's extra); nil when none. Keys and values are any
	// strings; a key is sent once.
	Details map[string]string
}

// NewBizError returns a BizError with code, reason, message and details
// (which it keeps: do not modify details afterwards).
func NewBizError(code int, reason, message string, details map[string]string) *BizError {
	return &BizError{Code: code, Reason: reason, Message: message, Details: details}
}

// Error returns Message; when it is empty, "business error" and the code
// and reason that are set.
func (e *BizError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	s := "business error"
	if e.Code != 0 {
		s += " " + strconv.Itoa(e.Code)
	}
	if e.Reason != "" {
		s += " " + e.Reason
	}
	return s
}

// The attachment keys of a BizError in an error response (docs/wire.md).
// A key starting BizAttachmentPrefix is the kernel's in a response:
// SetResponseAttachments refuses it, and a consumer reads every such key
// of a failed call's answer into the call's BizError rather than its
// received attachments.
const (
	BizAttachmentPrefix = "biz."
	// BizAttachmentCode holds Code in decimal, "0" included: every
	// BizError sends it, so that it says the error is one.
	BizAttachmentCode = "biz.code"
	// BizAttachmentReason holds Reason (absent when "").
	BizAttachmentReason = "biz.reason"
	// BizAttachmentMessage holds Message when it differs from the error
	// response's message (a method that wrapped the BizError: "place: out
	// of stock"); absent, the response's message is the BizError's.
	BizAttachmentMessage = "biz.message"
	// BizAttachmentDetail prefixes each detail's key: "biz.detail.sku".
	BizAttachmentDetail = "biz.detail."
)

// AppendBizAttachments adds to att, which it returns (a new map when att
// is nil), the attachments that carry e in an error response whose
// message is wireMsg, after deleting any key att had starting "biz.", at
// most limit attachments in all (details in key order until then: a BizError
// is not meant to carry thousands). It is the kernel's, for the
// exchange's encoder and a plugin host.
func AppendBizAttachments(att map[string]string, e *BizError, wireMsg string, limit int) map[string]string {
	out := make(map[string]string, len(att)+len(e.Details)+3)
	for k, v := range att {
		if !strings.HasPrefix(k, BizAttachmentPrefix) {
			out[k] = v
		}
	}
	out[BizAttachmentCode] = strconv.Itoa(e.Code)
	if e.Reason != "" {
		out[BizAttachmentReason] = e.Reason
	}
	if e.Message != wireMsg {
		out[BizAttachmentMessage] = e.Message
	}
	for _, k := range slices.Sorted(maps.Keys(e.Details)) {
		if len(out) >= limit {
			break
		}
		out[BizAttachmentDetail+k] = e.Details[k]
	}
	return out
}

// BizErrorFromAttachments is the reverse of AppendBizAttachments, on the
// consumer: for the attachments att of an error response whose message is
// wireMsg, it returns the BizError they carry (nil when no key starts
// "biz.") and att without those keys (nil when none is left).
// A biz.code that is not a decimal integer leaves Code 0 and is kept as
// the detail "biz.code", so that nothing a peer sent is lost. It does not
// modify att.
func BizErrorFromAttachments(att map[string]string, wireMsg string) (*BizError, map[string]string) {
	found := false
	for k := range att {
		if strings.HasPrefix(k, BizAttachmentPrefix) {
			found = true
			break
		}
	}
	if !found {
		return nil, att
	}
	e := &BizError{Message: wireMsg}
	var rest map[string]string
	for k, v := range att {
		switch {
		case k == BizAttachmentCode:
			if n, err := strconv.Atoi(v); err == nil {
				e.Code = n
			} else {
				e.setDetail(k, v)
			}
		case k == BizAttachmentReason:
			e.Reason = v
		case k == BizAttachmentMessage:
			e.Message = v
		case strings.HasPrefix(k, BizAttachmentDetail):
			e.setDetail(k[len(BizAttachmentDetail):], v)
		case strings.HasPrefix(k, BizAttachmentPrefix):
			e.setDetail(k, v) // a key of a later version: kept, not lost
		default:
			if rest == nil {
				rest = make(map[string]string, len(att))
			}
			rest[k] = v
		}
	}
	return e, rest
}

func (e *BizError) setDetail(k, v string) {
	if e.Details == nil {
		e.Details = make(map[string]string)
	}
	e.Details[k] = v
}
