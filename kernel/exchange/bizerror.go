package exchange

import (
	"errors"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// Business errors (spi.BizError) cross the wire in the attachments of the
// error response, under keys starting "biz." (docs/wire.md), which an older
// consumer reads as any attachments and ignores; the message and status
// are what any error of the method gets. Both ends do this on the error
// path only: an OK response costs nothing more.

// errorAttachments returns the attachments of the error response to
// res, whose message is msg: res.Attachments, with the BizError in
// res.Err's chain, if any, added.
func errorAttachments(res spi.Result, msg string) map[string]string {
	var be *spi.BizError
	if !errors.As(res.Err, &be) || be == nil {
		return res.Attachments
	}
	return spi.AppendBizAttachments(res.Attachments, be, msg, protocol.MaxAttachments)
}

// withBizError sets, on e, the error a consumer rebuilt from an error
// response whose attachments are att, the BizError they carry as its
// Cause (joined with the Cause e has), and returns att without its keys.
func withBizError(e *spi.Error, att map[string]string) map[string]string {
	be, rest := spi.BizErrorFromAttachments(att, e.Message)
	if be == nil {
		return att
	}
	if e.Cause == nil {
		e.Cause = be
	} else {
		e.Cause = errors.Join(e.Cause, be)
	}
	return rest
}
