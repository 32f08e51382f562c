package extension

import (
	"slices"

	"github.com/airnode/airnode/spi"
)

// kernelKeys are the URL keys the kernel reads: kernel.KernelKeys (its
// own keys and kernel/config's KernelKeys: timeout, retries, weight,
// payload, ...) and the keys that select an extension of each point (New).
// This package cannot import kernel (kernel imports it), so the list is
// written here; TestT20_6_EveryKernelKeyRefusedSecret, an external test
// that can import kernel, fails when kernel.KernelKeys gains a key this
// list lacks.
var kernelKeys = []string{
	// kernel.KernelKeys, the kernel's own
	spi.KeyMethods, spi.KeySide, spi.KeyGroup, spi.KeyVersion, spi.KeyInterface, spi.KeyBackup, "application", "pid",
	"dispatcher", "connection.concurrency", "heartbeat.min.ping.interval", "accepts", "accepts.per.ip", "unsent.limit", "health.service",
	spi.AttachmentToken, "connections", "protocol", "shutdown.timeout", "shutdown.wait", "registry", "advertise",
	"registry.empty.protection", "registry.removal.damping", "registry.removal.grace",
	// kernel/config.KernelKeys
	"timeout", "connect.timeout", "reconnect.backoff", "retries", "weight", "warmup", "timestamp", "payload",
	"heartbeat.interval", "heartbeat.timeout", "heartbeat.retries", "heartbeat.ping.timeout", "heartbeat.ping.on.timeout",
	"hash.arguments", "hash.nodes", "executes", "actives", "outlier.consecutive", "outlier.ejection", "outlier.max.percent",
	// the points' selecting keys
	"transport", "loadbalance", "codec", "heartbeat", "cluster", "filter",
}

// KernelKeys returns the URL keys the kernel reads (kernel.KernelKeys
// and the points' selecting keys, as above), as a new slice: the key
// catalog of a program that has no catalogs at hand (config.EnvKey).
func KernelKeys() []string { return slices.Clone(kernelKeys) }
