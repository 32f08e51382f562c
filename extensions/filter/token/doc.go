// Package token is the "token" filter: access control by a shared secret,
// as Dubbo's TokenFilter. On the provider, a call whose "token" attachment
// does not equal the provider's token (compared in constant time with
// crypto/subtle) is refused with BAD_REQUEST (RefusedStatus) "token: wrong
// token for S.M from ADDR: refused, ..." before the service runs, its Cause
// spi.ErrAccessDenied, and counted
// (Filter.Rejected and internal/counters Access.TokenRejections, which
// airnode stats prints as rejected before the service), and logged at
// Warn on the node's logger, rate-bounded with internal/ratelog ("token:
// refusing calls without the provider's token", with provider, peer,
// reason=missing or wrong, service, method, rejected; never a token's
// value); the metrics filter counts it as no call or failure of the
// method. The attachment is removed before the service sees the call. On the consumer, the filter copies the
// reference URL's token into the "token" attachment when the caller did
// not set one (direct references: airnode://host:port/svc?token=SECRET).
//
// Activated on both sides by the key "token" (order -50).
//
//	key    type    default  meaning
//	token  string  absent   the secret; "false" switches the check off;
//	                        "true" or "default": the kernel replaces it at
//	                        export with 32 random hex characters, published in
//	                        the registered provider URL, which consumers send
//	                        back; an empty value is an error
//
// Build refuses "true"/"default" that reached it unreplaced, since every
// consumer would then send the literal "true". Safe for concurrent use; no
// goroutines.
package token
