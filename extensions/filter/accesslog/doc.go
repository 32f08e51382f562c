// Package accesslog is the "accesslog" filter: one log line per call, on
// the consumer or the provider, with the time, the consumer's address (on
// the provider, from the "remote" attachment), the side, service key,
// method, status name and duration. The arguments are never logged unless
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
//	key             type    default  meaning
//	accesslog       string  absent   "true" or "default": the node's logger
//	                                 (kernel.WithLogger, in its format; the
//	                                 Builder's Logger when set; stderr in text
//	                                 outside a node); "false": off; anything
//	                                 else: a file path, appended to, created
//	                                 0644, in JSON when the node logs JSON
//	                                 (log/slog's JSON handler), else text
//	accesslog.args  bool    false    also log the arguments (fmt %v, at most 1 KiB)
//
// A file is opened on the first call that logs to it (Build does no I/O)
// and shared by every filter of the Builder writing to the same path; an
// open or write failure is reported once on the node's logger and never
// fails a call. Builder.Close closes the files. Safe for concurrent use; no
// goroutines.
package accesslog
