// Package failsafe is the "failsafe" cluster: one call on one provider; a
// failure is logged and swallowed, the caller gets a zero spi.Result (nil
// Value, nil Err, the failure in Swallowed for the filters above the
// cluster: the consumer's accesslog line says swallowed=true), for calls
// whose failure must not disturb the caller (audit logs), like Dubbo's
// FailsafeClusterInvoker. Unlike Dubbo, the absence of any provider is not
// swallowed: it is a deployment error and comes back as SERVICE_NOT_FOUND.
// The warning goes to the node's logger (spi.LoggerUser) unless the
// Builder was given one (WithLogger). No URL keys. Safe for concurrent
// use; owns no goroutine.
package failsafe
