// Package kernel is airnode's runtime: a Node exports services (provider
// path: server -> exchange -> filters -> exporter) and refers to them
// (consumer path: reference -> filters -> cluster -> directory -> load
// balance -> remote invoker), with every extension looked up by name in the
// node's extension.Catalogs. It never imports a concrete
// extension.
//
// The consumer's connection manager owns one channel per provider address
// (connections=N for more), redials dead channels with backoff in the
// background and publishes a channel only after a ping round trip. A
// reference stops picking, for a while, a provider whose calls keep
// failing (outlier ejection, outlier.go: Envoy's and gRPC's outlier
// detection).
//
// A provider answers an error its method returned with SERVICE_ERROR, or
// with the status of the *spi.Error it carries when that status does not
// say the call did not run: SERVICE_ERROR, SERVER_ERROR, BAD_REQUEST,
// BAD_RESPONSE, SERIALIZATION_ERROR, SERVER_TIMEOUT. Any other
// (SERVICE_NOT_FOUND from the method's own downstream call...) becomes
// SERVICE_ERROR "<service>.<method> returned <STATUS>: ...", so that
// failover never runs a method again because of what it returned. Only
// the statuses the framework answers before the method runs (no such
// method, bad arguments, a refusing filter) say it did not run. Only the
// status and the error's text cross the wire: the consumer gets an
// *spi.Error whose Message is the method's err.Error(); the error's Go
// type, what it wraps and a result returned with it stay on the provider,
// so on the consumer errors.As matches *spi.Error and errors.Is the spi
// sentinels (spi.ErrServiceError...), never the provider's own types or
// sentinels. A method chooses its status with spi.Errorf
// (Example_handlerErrors).
//
// Node, Reference and Exporter are safe for concurrent use. Node.Shutdown
// runs a fixed order (unregister, wait, stop accepting, drain, close
// channels and heartbeats, close registries), is idempotent and returns
// after every goroutine the node owns has exited, within its bounds: the
// goroutine of a method that ignores its cancelled context is the
// method's, and is not waited for.
//
// URL keys read here (side: consumer, read from a reference's URL merged
// with its provider's, whose value is the default through a registry but
// never reaches a direct reference, Node.Refer; provider, read from an
// export's URL; both; node, the node's, from an option or an export's URL,
// never from a reference's: Refer warns). `airnode list --keys` gives
// each key's bounds; the extensions' keys are in their packages' docs:
// retries (default 2) and idempotent (default false) in
// extensions/cluster/failover, the balancers' in extensions/lb/...:
//
//	key                 side      type      default  meaning
//	transport           both      name      smux     transport extension (smux, tcp); the consumer's must be its provider's
//	codec               both      name      msgpack  serialization (msgpack, json, protobuf), method-level first;
//	                                                 a provider answers in the codec of each request
//	payload             both      size      8MiB     largest frame body: bytes, 64KiB, 8MiB (KiB, MiB, GiB: ×1024; KB, MB,
//	                                                 GB: ×1000), ≥ 1; a longer call fails BAD_REQUEST or BAD_RESPONSE
//	timeout             consumer  duration  1s       call timeout per attempt, method-level first (Reference.Call)
//	connect.timeout     consumer  duration  3s       dial plus first ping
//	reconnect.backoff   consumer  duration  100ms    first redial delay, doubling to 30s, ±20% jitter
//	connections         consumer  int 1-64  1        sessions per provider address, round-robined
//	outlier.consecutive consumer  int ≥ 0   5        failures in a row that eject a provider, 0: off
//	outlier.ejection    consumer  duration  5s       first ejection, doubling soon after, up to 5m
//	outlier.max.percent consumer  int 0-100 50       most of a reference's providers out at once
//	weight              provider  int ≥ 0   100      provider weight
//	warmup              provider  duration  10m      provider warm-up period
//	timestamp, methods  provider  set at export      ms since epoch; sorted comma list
//	shutdown.wait       node      duration  2s       wait after unregistering (WithShutdownWait; an export's: the largest wins)
//	shutdown.timeout    node      duration  10s      Shutdown's and Close's whole budget (WithShutdownTimeout; an export's: the
//	                                                 largest wins): the calls in flight served, then those made by the
//	                                                 node's references, drain within it
//	registry            provider  URL       none     registry to register in (else the node's)
//	accepts             provider  int ≥ 0   0        connections served at once per listening address,
//	                                                 0: RLIMIT_NOFILE minus max(64, 10%); beyond: told why, closed
//	accepts.per.ip      provider  int ≥ 0   0        the same per peer IP address, 0: no limit
package kernel
