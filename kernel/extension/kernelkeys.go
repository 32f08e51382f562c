package extension

import (
	"fmt"
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
	"dispatcher", "connection.concurrency", "heartbeat.min.ping.interval", "accepts", "accepts.per.ip", "unsent.limit",
	spi.AttachmentToken, "connections", "protocol", "shutdown.timeout", "shutdown.wait", "registry", "advertise",
	// kernel/config.KernelKeys
	"timeout", "connect.timeout", "reconnect.backoff", "retries", "weight", "warmup", "timestamp", "payload",
	"heartbeat.interval", "heartbeat.timeout", "heartbeat.retries", "heartbeat.ping.timeout", "heartbeat.ping.on.timeout",
	"hash.arguments", "hash.nodes", "executes", "actives", "outlier.consecutive", "outlier.ejection", "outlier.max.percent",
	// the points' selecting keys
	"transport", "loadbalance", "codec", "heartbeat", "cluster", "filter",
}

// checkSecretKeys refuses an extension that declares one of the kernel's
// keys (kernelKeys) Secret (spi.KeyDoc.Secret): the mark is process-wide
// and never removed (spi.MarkSecretKey), so "timeout=***" would then hide
// the kernel's own value in every log, error and listing of every node in
// the process. Declaring a kernel key without Secret stays allowed (the
// extension then reads the value the kernel reads). "token" is secret
// already, so declaring it Secret changes nothing and is allowed.
func checkSecretKeys(point, name string, ext any) error {
	kd, ok := ext.(spi.KeyDescriber)
	if !ok {
		return nil
	}
	for _, d := range kd.Keys() {
		if d.Secret && d.Key != spi.AttachmentToken && slices.Contains(kernelKeys, d.Key) {
			return fmt.Errorf("%s: %q declares the kernel's URL key %q secret: the kernel reads that key, and a secret mark is process-wide, so every log, error and listing of the process would hide its value; declare a key of the extension's own (such as %q) secret instead",
				point, name, d.Key, name+"."+d.Key)
		}
	}
	return nil
}
