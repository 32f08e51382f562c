// Package failsafe is the "failsafe" cluster: one call on one provider; a
// framework failure (network, timeout, a provider's refusal or crash) is
// logged and swallowed, the caller gets
// a zero spi.Result (nil Value, nil Err, the failure in Swallowed for the
// filters above the cluster: the consumer's accesslog line says
// swallowed=true), for calls whose failure must not disturb the caller
// (audit logs), like Dubbo's FailsafeClusterInvoker. A business error
// (SERVICE_ERROR: the method ran and returned an error; or any error
// carrying a *spi.BizError) is returned unchanged, as Dubbo's business
// exception passes through failsafe in the AppResponse (Business). Unlike
// Dubbo, the absence of any provider is not swallowed: it is a deployment
// error and comes back as SERVICE_NOT_FOUND.
// The warning goes to the node's logger (spi.LoggerUser) unless the
// Builder was given one (WithLogger), rate-bounded per service, method,
// provider and status with internal/ratelog: the first of a burst, then
// one per doubling up to 1,024, then one every 10 s, each after the first
// with suppressed and in_burst, and a summary 10 s after the last line of
// a class whose lines were being left out. No URL keys. Safe for concurrent
// use; owns no goroutine (a pending summary is a timer).
package failsafe
