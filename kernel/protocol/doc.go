// Package protocol is airnode's wire frame: a 16-byte big-endian
// header followed by a body of at most the payload limit.
//
//	bytes 0-1   magic 0xA1 0x7E
//	byte  2     flags: 0x80 request, 0x40 two-way, 0x20 event (heartbeat),
//	            low 5 bits the codec id (0 for an event with no body)
//	byte  3     status (responses; spi.Status numbers, Dubbo's)
//	bytes 4-11  request id
//	bytes 12-15 body length in bytes (≤ payload)
//
// Events (FlagEvent, codec 0; the exchange gives them their meaning,
// docs/wire.md): a two-way event is a heartbeat (its body, if any, the
// sender's heartbeat keys); one-way events are the provider's draining
// ("D"), read-only ("R"), go-away ('G' and the last request id read, 8
// bytes) and close reason ('C' and why it closes the connection, UTF-8),
// and the consumer's cancel (empty body; the id is the cancelled request's). A
// peer ignores a one-way event it does not know.
//
// Header encoding and decoding live only here, and so does the body's
// preamble (body.go): service, method, deadline, attachments and argument
// count of a request, attachments and error message of a response, written
// by the kernel in every codec alike; only arguments and results go
// through the frame's codec. Decoding reports a bad magic,
// a length over the payload limit and a truncated header as errors matching
// ErrBadMagic, ErrTooLarge and ErrTruncated with errors.Is (ErrTooLarge
// with the decoded header, so that the exchange can skip the body and
// answer the call); the exchange closes the connection on the others. Everything here is a pure function
// and safe for concurrent use.
package protocol
