// Package accesslog is the "accesslog" filter: one log line per call, on
// the consumer or the provider, with the time, the side, the other end's
// address (on the provider "consumer", from the "remote"
// attachment, and under mutual TLS "client_cert", the name of the
// certificate it presented: "CN=orders", else its first DNS name
// "DNS:orders.example", from spi.PeerCertificate; on the consumer "provider", the provider the cluster called,
// the last one tried after a failover: spi.Result.ProviderAddr), service
// key, method, status name, "duration" (Go's text, "1.5ms", in both
// formats) and "duration_ms" (a number, microsecond precision), and the
// attachments accesslog.attachments lists ("attachments.trace=T-1"), so
// that the consumer's and the provider's lines of one call can be paired
// by a trace id both print. Every line ends with the exchange: request_id
// (the request's id on its connection, the wire header's) and local (this
// side's address on that connection), so a consumer's line and its
// provider's pair with no trace id: the same request_id, and the
// consumer's local is the provider's remote (request ids count per
// connection). The consumer's are its last attempt's
// (spi.Result.RequestID and Local: none when no request was made, no
// provider available); the provider's local is its own address, which
// names the provider in a collector gathering several's lines
// (spi.Invocation.RequestID and Local). The arguments are never logged unless
// accesslog.args=true. On the consumer the filter wraps the reference,
// above the cluster: a failure the failsafe cluster swallowed is logged
// with its status (SERVICE_ERROR...) and swallowed=true. On the
// provider a call answered before the service's filter chain — a method
// the service lacks (SERVICE_NOT_FOUND), arguments that do not decode
// (BAD_REQUEST) — is logged too, with duration 0 and before_filters=true:
// the kernel reports it to Filter.Rejected. A call to a service the
// server does not export has no filter chain to log it.
//
// Activated on both sides by the key "accesslog" (order -100).
//
//	key                    type    default  meaning
//	accesslog              string  absent   "true" or "default": the node's logger
//	                                        (kernel.WithLogger, in its format; the
//	                                        Builder's Logger when set; stderr in text
//	                                        outside a node); "false": off; anything
//	                                        else: a file path, appended to, created
//	                                        0644, in JSON when the node logs JSON
//	                                        (log/slog's JSON handler), else text
//	accesslog.args         bool    false    also log the arguments (fmt %v, at most 1 KiB)
//	accesslog.attachments  string  absent   comma-separated attachment keys
//	                                        (trace,tenant) whose values the line
//	                                        prints, at most 256 bytes each; a
//	                                        secret (token) is refused
//
// A file is opened on the first call that logs to it (Build does no I/O)
// and shared by every filter of the Builder writing to the same path; an
// open or write failure is reported once on the node's logger and never
// fails a call. CheckFile (serve runs it before exporting) opens a path
// as the first call would. A file follows log rotation two ways:
// Builder.Reopen reopens every open file at its path at once (serve calls
// it on SIGHUP, logrotate's postrotate), and each file checks, at most
// once per RenameCheck (1 s), that its path still names it, reopening it
// when it was renamed or removed, as inode-checking loggers do, so a
// rotation without a signal loses no line and costs at most a second in
// the old file. Builder.Close closes the files. Safe for concurrent use;
// no goroutines.
package accesslog
