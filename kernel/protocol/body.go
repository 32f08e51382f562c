package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The body of a request or response frame starts with a preamble the
// kernel writes itself, in every codec the same way; only the arguments and
// the result value go through the frame's codec. Like gRPC's headers beside
// its protobuf message, this keeps the routing fields cheap to read (no
// codec decoder, no map, no allocation for the common call) and
// independent of the codec. Integers are unsigned varints
// (encoding/binary's uvarint); a string is its length as a uvarint, then
// its bytes.
//
// Request body:
//
//	string   service key ("group/interface:version")
//	string   method name
//	uvarint  timeout: the consumer's remaining deadline in milliseconds, 0 none
//	uvarint  number of attachments, then key and value strings for each
//	uvarint  number of arguments (≤ MaxArgs)
//	...      the arguments, one after another, in the frame's codec
//
// Response body:
//
//	uvarint  number of attachments, then key and value strings for each
//	...      status OK: the result value in the frame's codec;
//	         any other status: the error message as a string
const (
	// MaxArgs is the largest argument count a request may declare.
	MaxArgs = 1 << 16
	// MaxAttachments is the largest attachment count a body may declare.
	MaxAttachments = 1 << 12
)

// ErrBadBody is matched (errors.Is) by every preamble decoding error.
var ErrBadBody = errors.New("bad body preamble")

// AppendString appends s as a uvarint length and its bytes.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendAttachments appends the count of att and its pairs (map order).
func AppendAttachments(b []byte, att map[string]string) []byte {
	b = binary.AppendUvarint(b, uint64(len(att)))
	for k, v := range att {
		b = AppendString(b, k)
		b = AppendString(b, v)
	}
	return b
}

// AppendRequestPreamble appends a request preamble: service, method, the
// timeout in milliseconds (0: none), the attachments and the argument count.
func AppendRequestPreamble(b []byte, service, method string, timeoutMS uint64, att map[string]string, numArgs int) []byte {
	b = AppendString(b, service)
	b = AppendString(b, method)
	b = binary.AppendUvarint(b, timeoutMS)
	b = AppendAttachments(b, att)
	return binary.AppendUvarint(b, uint64(numArgs))
}

// RequestPreamble is a decoded request preamble. Service and Method alias
// the body they were read from.
type RequestPreamble struct {
	Service, Method []byte
	TimeoutMS       uint64 // 0: no deadline
	NumArgs         int    // 0..MaxArgs
	attachments     []byte // the encoded pairs
	numAttachments  int
}

// NumAttachments returns how many attachments the request carries.
func (p *RequestPreamble) NumAttachments() int { return p.numAttachments }

// Attachments returns the request's attachments as a new map, or nil when
// there are none.
func (p *RequestPreamble) Attachments() map[string]string {
	att, _, _ := readPairs(p.attachments, p.numAttachments)
	return att
}

// ParseRequestPreamble reads a request preamble from the start of body and
// returns it with the rest of the body (the arguments). A length past the
// end of body, a count over its bound or a varint overflow is an error
// matching ErrBadBody that names the field.
func ParseRequestPreamble(body []byte) (p RequestPreamble, rest []byte, err error) {
	if p.Service, body, err = readString(body, "service"); err != nil {
		return p, nil, err
	}
	if p.Method, body, err = readString(body, "method"); err != nil {
		return p, nil, err
	}
	if p.TimeoutMS, body, err = readUvarint(body, "timeout"); err != nil {
		return p, nil, err
	}
	start := body
	if p.numAttachments, body, err = skipPairs(body); err != nil {
		return p, nil, err
	}
	p.attachments = start[:len(start)-len(body)]
	n, body, err := readUvarint(body, "argument count")
	if err != nil {
		return p, nil, err
	}
	if n > MaxArgs {
		return p, nil, fmt.Errorf("%w: argument count %d over %d", ErrBadBody, n, MaxArgs)
	}
	p.NumArgs = int(n)
	return p, body, nil
}

// RequestName returns the service key and method name a request body's
// preamble starts with, aliasing body, reading nothing after them; ok is
// false when the body does not parse that far. For callers that route by
// name alone on a hot path (the exchange's Options.SmallAnswer lookup).
func RequestName(body []byte) (service, method []byte, ok bool) {
	service, body, err := readString(body, "service")
	if err != nil {
		return nil, nil, false
	}
	if method, _, err = readString(body, "method"); err != nil {
		return nil, nil, false
	}
	return service, method, true
}

// RequestTimeoutMS returns the timeout (milliseconds) a request body's
// preamble carries, reading only what comes before it (service, method);
// 0 when it carries none or the body does not parse that far. For callers
// that need the timeout alone, on a hot path (ParseRequestPreamble also
// walks the attachments).
func RequestTimeoutMS(body []byte) uint64 {
	_, body, err := readString(body, "service")
	if err != nil {
		return 0
	}
	if _, body, err = readString(body, "method"); err != nil {
		return 0
	}
	ms, n := binary.Uvarint(body)
	if n <= 0 {
		return 0
	}
	return ms
}

// ParseAttachments reads the attachment count and pairs from the start of
// body (a response preamble) and returns them (nil when none) with the rest
// of the body.
func ParseAttachments(body []byte) (att map[string]string, rest []byte, err error) {
	start := body
	n, body, err := skipPairs(body)
	if err != nil {
		return nil, nil, err
	}
	att, _, _ = readPairs(start, n)
	return att, body, nil
}

// ParseString reads one string from the start of body.
func ParseString(body []byte) (s []byte, rest []byte, err error) {
	return readString(body, "string")
}

// skipPairs validates the attachment count and pairs at the start of body
// and returns the count and what follows them.
func skipPairs(body []byte) (int, []byte, error) {
	n, body, err := readUvarint(body, "attachment count")
	if err != nil {
		return 0, nil, err
	}
	if n > MaxAttachments {
		return 0, nil, fmt.Errorf("%w: attachment count %d over %d", ErrBadBody, n, MaxAttachments)
	}
	for range n {
		if _, body, err = readString(body, "attachment key"); err != nil {
			return 0, nil, err
		}
		if _, body, err = readString(body, "attachment value"); err != nil {
			return 0, nil, err
		}
	}
	return int(n), body, nil
}

// readPairs reads count, then n validated pairs, into a new map.
func readPairs(b []byte, n int) (map[string]string, []byte, error) {
	_, b, err := readUvarint(b, "attachment count")
	if err != nil || n == 0 {
		return nil, b, err
	}
	att := make(map[string]string, n)
	for range n {
		var k, v []byte
		if k, b, err = readString(b, "attachment key"); err != nil {
			return nil, nil, err
		}
		if v, b, err = readString(b, "attachment value"); err != nil {
			return nil, nil, err
		}
		att[string(k)] = string(v)
	}
	return att, b, nil
}

func readUvarint(b []byte, what string) (uint64, []byte, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, uvarintError(n, what)
	}
	return v, b[n:], nil
}

func uvarintError(n int, what string) error {
	if n == 0 {
		return fmt.Errorf("%w: %s: body ends", ErrBadBody, what)
	}
	return fmt.Errorf("%w: %s: varint overflows 64 bits", ErrBadBody, what)
}

func readString(b []byte, what string) ([]byte, []byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, nil, uvarintError(k, what+" length")
	}
	b = b[k:]
	if n > uint64(len(b)) {
		return nil, nil, fmt.Errorf("%w: %s of %d bytes, %d left in the body", ErrBadBody, what, n, len(b))
	}
	return b[:n:n], b[n:], nil
}
