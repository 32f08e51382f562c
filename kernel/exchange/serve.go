package exchange

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// run serves t on a worker goroutine: it decodes the request, runs the
// handler and answers (two-way requests only). A request whose channel died
// while it was queued is dropped unserved.
func (c *Channel) run(t task) {
	select {
	case <-c.dying:
		c.finish()
		return
	default:
	}
	res := c.handle(t.h, t.codec, t.body)
	if t.h.TwoWay() && c.respond(t.h.ID, t.codec, res) {
		return // handed off: the sender finishes the request
	}
	c.finish()
}

// finish ends a request dispatch counted: in flight, and in handlers.
func (c *Channel) finish() {
	c.inflight.Add(-1)
	if c.serverInflight != nil {
		c.serverInflight.Add(-1)
	}
	c.handlers.Done()
}

// handle decodes the request header and calls the handler: a body that does
// not decode is BAD_REQUEST; a missing handler SERVICE_NOT_FOUND; a panic
// SERVER_ERROR.
func (c *Channel) handle(h protocol.Header, codec spi.Codec, body []byte) (res spi.Result) {
	r := &struct {
		Request
		rd bytes.Reader
	}{Request: Request{Codec: codec, Remote: c.remote}} // one allocation for both
	r.rd.Reset(body)
	req := &r.Request
	dec := codec.NewDecoder(&r.rd)
	if err := decodeRequestHeader(dec, req); err != nil {
		return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "exchange: bad request body (codec %s): %v", codec.Name(), err)}
	}
	if c.opts.Handler == nil {
		return spi.Result{Err: spi.Errorf(spi.StatusServiceNotFound, "exchange: %s serves no services (service %q)", c.opts.Side, req.Service)}
	}
	var deadline time.Time
	if v, ok := req.Attachments[spi.AttachmentTimeout]; ok {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 {
			return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "exchange: attachment timeout=%q: want a positive number of milliseconds", v)}
		}
		deadline = time.Now().Add(time.Duration(ms) * time.Millisecond)
	}
	ctx := newReqCtx(c.ctx, deadline)
	defer ctx.release()
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("handler panic", "service", req.Service, "method", req.Method, "panic", p, "stack", string(debug.Stack()))
			res = spi.Result{Err: spi.Errorf(spi.StatusServerError, "exchange: panic in %s.%s: %v", req.Service, req.Method, p)}
		}
	}()
	res = c.opts.Handler.Serve(ctx, req)
	if res.Err != nil && errors.Is(res.Err, context.DeadlineExceeded) && ctx.Err() != nil && c.ctx.Err() == nil {
		// The consumer's deadline passed while serving: say so in its terms.
		res.Err = spi.Errorf(spi.StatusServerTimeout, "exchange: %s.%s: consumer deadline of %s ms passed on the provider", req.Service, req.Method, req.Attachments[spi.AttachmentTimeout])
	}
	return res
}

// decodeRequestHeader reads service, method, attachments and the argument
// count, leaving dec at the first argument.
func decodeRequestHeader(dec spi.Decoder, req *Request) error {
	if err := dec.Decode(&req.Service); err != nil {
		return fmt.Errorf("service: %w", err)
	}
	if err := dec.Decode(&req.Method); err != nil {
		return fmt.Errorf("method: %w", err)
	}
	if err := dec.Decode(&req.Attachments); err != nil {
		return fmt.Errorf("attachments: %w", err)
	}
	if len(req.Attachments) == 0 {
		req.Attachments = nil
	}
	if err := dec.Decode(&req.NumArgs); err != nil {
		return fmt.Errorf("argument count: %w", err)
	}
	if req.NumArgs < 0 || req.NumArgs > 1<<16 {
		return fmt.Errorf("argument count %d out of range 0..65536", req.NumArgs)
	}
	req.Args = dec
	return nil
}

// respond encodes res as the response to request id in codec and sends it.
// A response that fails to encode becomes SERIALIZATION_ERROR, one over the
// payload limit BAD_RESPONSE naming the limit: the consumer always hears back.
//
// A worker must not wait on a consumer that reads slowly (that would take a
// pool worker from every other consumer): a response that cannot join the
// writer's queue at once — no room (maxQueued), or a large body bound for a
// stream of its own — is handed to a goroutine of its own, and respond
// returns true: that goroutine finishes the request (Channel.finish) once
// the frame is sent, so the request stays in flight, and MaxConcurrent
// bounds these goroutines per channel.
func (c *Channel) respond(id uint64, codec spi.Codec, res spi.Result) (handedOff bool) {
	f := getFrame()
	defer func() {
		if !handedOff {
			putFrame(f)
		}
	}()
	status, err := encodeResponse(f, codec, res)
	if err != nil {
		status = spi.StatusSerializationError
		f.b = f.b[:protocol.HeaderLen]
		_, _ = encodeResponse(f, codec, spi.Result{Err: spi.Errorf(status, "exchange: encode response (codec %s): %v", codec.Name(), err)})
	}
	if n := int64(len(f.b) - protocol.HeaderLen); n > c.payload {
		status = spi.StatusBadResponse
		msg := fmt.Sprintf("exchange: response body %d bytes exceeds payload limit %s", n, protocol.FormatSize(c.payload))
		c.log.Warn("response over payload limit", "request_id", id, "bytes", n, "payload", c.payload)
		f.b = f.b[:protocol.HeaderLen]
		_, _ = encodeResponse(f, codec, spi.Result{Err: &spi.Error{Status: status, Message: msg}})
	}
	protocol.Header{Flags: codec.ID() & protocol.CodecMask, Status: status, ID: id, Length: uint32(len(f.b) - protocol.HeaderLen)}.Put(f.b)
	if !c.ownStream(f.b) && c.w.tryEnqueue(f.b) {
		return false
	}
	go func() {
		defer c.finish()
		defer putFrame(f)
		if err := c.send(f.b); err != nil {
			c.die(err.Error(), slog.LevelWarn)
		}
	}()
	return true
}

// encodeResponse appends the response body to f: attachments, then the
// value (OK) or the error message.
func encodeResponse(f *frameBuf, codec spi.Codec, res spi.Result) (spi.Status, error) {
	enc := codec.NewEncoder(f)
	if err := enc.Encode(res.Attachments); err != nil {
		return 0, err
	}
	if res.Err == nil {
		return spi.StatusOK, enc.Encode(res.Value)
	}
	status, msg := spi.StatusServiceError, res.Err.Error()
	var e *spi.Error
	if errors.As(res.Err, &e) && e.Status != spi.StatusOK {
		status = e.Status
		if e == res.Err {
			msg = e.Message // the consumer prefixes the status name again
		}
	}
	return status, enc.Encode(msg)
}
