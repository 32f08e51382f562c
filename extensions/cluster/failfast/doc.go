// Package failfast is the "failfast" cluster: one call on one provider
// chosen by the balancer, its failure returned as is (Dubbo's
// FailfastClusterInvoker), for calls that must not be repeated. No URL keys.
// Safe for concurrent use; owns no goroutine.
package failfast
