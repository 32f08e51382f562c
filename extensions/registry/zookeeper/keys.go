package zookeeper

import "github.com/airnode/airnode/spi"

// Keys describes the registry URL's keys Build reads (spi.KeyDescriber);
// the ensemble is the URL's hosts, the digest ACL its user:password.
func (Builder) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: spi.KeyBackup, Type: spi.KeyTypeHosts, Doc: "more ensemble servers, h:2181,h:2181 (Dubbo's form)"},
		{Key: KeyRoot, Type: spi.KeyTypeString, Default: DefaultRoot, Doc: `root node, no '/', under the URL's path (a ZooKeeper chroot: zookeeper://h:2181/staging); "" puts services at the chroot or /`},
		{Key: KeySessionTimeout, Type: spi.KeyTypeDuration, Default: "30s", Doc: "ZooKeeper session timeout (a kill -9'd provider's entry goes after it), 400ms..1h"},
		{Key: KeyConnectTimeout, Type: spi.KeyTypeDuration, Default: "5s", Doc: "how long a first contact (or a lost session) waits for a session; after it, calls answer at once from file.cache or fail, 10ms..1m"},
		{Key: KeyCheck, Type: spi.KeyTypeBool, Default: "true", Doc: "Dubbo's registry check: a provider's Register, and a consumer's Subscribe with no file.cache entry, fail when no session comes within connect.timeout; false queues the entry and registers it, or starts the consumer with no provider and lists them, when ZooKeeper answers"},
		{Key: KeyFileCache, Type: spi.KeyTypePath, Doc: "file of the last known providers of each interface, used while ZooKeeper is down; absent: no cache"},
	}
}

var _ spi.KeyDescriber = Builder{}
