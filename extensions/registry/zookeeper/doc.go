// Package zookeeper is the ZooKeeper registry, extension name "zookeeper"
// (github.com/go-zookeeper/zk), with Dubbo's layout:
//
//	/<root>/<service key>/providers/<url.QueryEscape(canonical provider URL)>
//	/<root>/<service key>/consumers/<url.QueryEscape(canonical consumer URL)>
//
// Entries are ephemeral nodes, their parents persistent; each name is encoded
// exactly once, and registering an existing entry is a no-op. A goroutine the
// registry owns drains zk's event channel and tracks the session: after a new
// session (expiry) it re-creates the registry's own entries at once, and every
// subscription re-lists and re-arms its watch after every event and every
// reconnect. While ZooKeeper is unreachable, subscribers keep their last list:
// nothing is pushed, and right after a session expiry an empty re-list is held
// back for ExpiryGrace so providers can re-register; an empty list from a
// healthy ZooKeeper is pushed as is.
//
// ZooKeeper is known to be down once there has been no session for
// connect.timeout (since the first contact, or since the session was lost):
// from then on until a session is back, Register queues, and Lookup,
// Services and a Subscribe's first list answer at once from file.cache
// (Registry.FromCache gives the list's age and how long ZooKeeper has been
// unreachable) or fail naming the servers and that time, instead of waiting
// connect.timeout each. A first contact still waits connect.timeout.
//
//	URL key          type      unit  default   bounds      meaning
//	(hosts), backup  hosts     -     -         >= 1        ensemble "h1:2181,h2:2181" (also ?backup=h3:2181)
//	root             string    -     airnode   one name    root node; a leading '/' is allowed (Dubbo's "/dubbo"); "" or "/" puts services at /
//	session.timeout  duration  ms    30s       400ms..1h   ZooKeeper session timeout
//	connect.timeout  duration  ms    5s        10ms..1m    how long a first contact (or a lost session) waits for a session
//	file.cache       path      -     ""        -           last known lists on disk and when each was read, used when ZooKeeper is down
//	user:password@   string    -     ""        -           digest ACL on created nodes, and the session's auth
//
// Safe for concurrent use. Close deletes the registry's entries, closes the
// session and waits for every goroutine, zk's included.
package zookeeper
