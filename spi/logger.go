package spi

import "log/slog"

// LoggerUser is the optional interface of what a builder builds (a
// Cluster, a Filter, a LoadBalance, a Registry) that logs. Right after
// Build returns it, before any other method is called and never
// concurrently with one, the kernel calls UseLogger with the node's logger
// (kernel.WithLogger; slog.Default() when none was given), so that one
// process logs through one logger, in one format (--log-format json
// reaches every line), as Dubbo's extensions all log through its single
// logger adapter. A builder reused by several nodes thus logs each node's
// lines to that node's logger. An extension given a logger of its own (a
// Builder option or field) keeps it and ignores l; one that does not
// implement LoggerUser logs where it likes (slog.Default(), typically).
type LoggerUser interface {
	UseLogger(l *slog.Logger)
}

// LogEnds is the key of the attribute an extension adds to an Info
// record that ends an incident one of its Warn records began, valued
// with the beginning Warn's message or its start (the ZooKeeper
// registry's "connected again", ends="connection lost"). A front end
// that shows warnings only (airnode call and bench by default) shows
// these records too, so that whoever saw an incident begin sees it end;
// the incident's end stays at Info, where a "page on Warn" rule does not
// fire. One such record per Warn it ends.
const LogEnds = "ends"
