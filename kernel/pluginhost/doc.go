// Package pluginhost runs airnode's out-of-process plugins: it launches the
// binaries declared in the plugins: section of plugins.yaml (go-plugin over
// gRPC), checks their sha256 first when one is given, performs the
// handshake, and adapts each plugin into a catalog extension (loadbalance,
// registry, filter) registered with its binary path as origin, or into
// service invokers the node exports.
//
// Start: a plugin that cannot start is marked failed, with an error that
// names it, its binary and the reason: how the process ended and the last
// lines it wrote on stderr (the host reads stderr as it comes and holds
// the first and last 100 lines written before the handshake until the
// start's outcome, so a chatty plugin never waits on the log). It stays in the catalogs (Register), where
// building it fails with that error. Each plugin runs in a process group
// of its own (Linux), killed when the start fails, when it exits and at
// Close, so that start_timeout bounds a wrapper script whose children hold
// its stdout. StartPoints and StartIf start some plugins only (a consumer
// starts no service plugin; a command, only the plugins it may use); the
// others stay "not started", catalogued like failed ones.
//
// Supervision: a plugin that exits is restarted with exponential backoff
// according to its restart policy (always, on-failure, never): 100 ms,
// then twice as long after each quick exit, up to 10 s; a plugin that ran
// for StableAfter (30 s) starts again from 100 ms. A restart refused
// because the binary's sha256 is no longer the pinned one is not retried:
// the plugin is failed, and started once the file matches again. While it is
// down, calls that need it fail fast with a status naming the plugin and the
// reason, except balancers, which fall back to the point's default balancer
// with a rate-limited warning, and filters, whose calls wait for the
// restart within their deadline (pluginrpc.NewFilterBuilder): the host's
// error says whether one is coming (pluginrpc.RestartPending). A plugin that runs but answers nothing
// (stopped, frozen) is not restarted: calls that pass their deadline
// without its answer are logged in a rate-bounded warning naming it, and
// a liveness ping unanswered for DefaultUnresponsiveAfter marks it
// Unresponsive (PluginInfo) until it answers one. A plugin whose process runs but
// whose gRPC connection is broken (it closed its listener or stopped its
// gRPC server: the liveness ping is refused, Unavailable, twice
// BrokenRecheck apart) is killed by its PID, with a warning naming it and
// the ping's error, and restarted as a process that exited, calls
// meanwhile treated as while a dead one restarts. A plugin that fails
// never takes the host down. Close stops every plugin (gracefully, then by force) and waits for
// every goroutine the Host started. A Host is safe for concurrent use.
package pluginhost
