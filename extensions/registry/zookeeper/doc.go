// Package zookeeper is the ZooKeeper registry, extension name "zookeeper"
// (github.com/go-zookeeper/zk), with Dubbo's layout (Dubbo 2.7's and
// dubbo-go's ZookeeperRegistry: toUrlPath, toCategoryPath):
//
//	[/<chroot>]/<root>/<interface>/providers/<url.QueryEscape(provider URL)>
//	[/<chroot>]/<root>/<interface>/consumers/<url.QueryEscape(consumer URL)>
//
// where the URL is written as Dubbo's URL.toFullString writes it, its
// parameters' commas, colons and slashes as they are (fullString), so
// that the name decodes in one step for a Dubbo reader.
//
// The URL's path is a ZooKeeper chroot, as in ZooKeeper's own connect
// string "h1:2181,h2:2181/chroot" (Curator, Kafka's zookeeper.connect):
// zookeeper://h:2181/staging?root=dubbo puts every node under
// /staging/dubbo, and root= (Dubbo's group of its registry URL) is the node
// under the chroot; the chroot may have several levels (/a/b), is created
// when missing, and a chroot with an empty, "." or ".." node name is an
// error. Dubbo and dubbo-go do not read a chroot (Dubbo separates fleets by
// its root, the registry's group): a Dubbo registry URL's path,
// org.apache.dubbo.registry.RegistryService (DubboRegistryPaths), is not a
// chroot, so such a URL copied from Dubbo means Dubbo's tree. A path was
// ignored in earlier versions, silently mixing fleets meant to be
// separate.
//
// One node per interface holds the entries of every group and version;
// group and version are URL parameters. The URL written (node name and
// data) carries interface=<interface> and category=providers|consumers,
// as Dubbo's do, and side (set by the kernel; side=provider is added to a
// URL without one); the registry takes category, and interface when it is
// the URL's path, off the URLs it reads, so a consumer gets the provider
// URL as it was registered. Dubbo Admin, or a Dubbo or dubbo-go process
// with the same root (root=/dubbo), sees one interface with its groups and
// versions. A consumer entry goes under its interface's consumers node
// whatever its group and version (group=* makes no "*" node). Dubbo
// Admin's rules (Dubbo 2.6: <interface>/configurators and routers;
// Dubbo 2.7/3: the config center's /<root>/config/dubbo/<key>.configurators,
// .condition-router, .tag-router) are not applied: a consumer's first
// subscription to an interface warns of those it finds, Rules lists
// them (registry ls), and a rule written or changed while the
// subscription runs is warned of once, rate bounded, and given to
// OnRuleChange's function (registry watch; rules.go: child, exists and
// data watches of those nodes, no polling).
//
// Lookup and Subscribe list the interface's providers node and keep the
// providers whose group and version the consumer accepts: one value, a
// list (group=a,b) or * (any), the directory's rule (internal/groupversion;
// Dubbo's UrlUtils.isMatch). Services derives the service keys
// (group/interface:version) from the providers' URLs. The earlier airnode
// layout named nodes by service key (/airnode/gray%2Fdemo.Echo%3A2.0.0/...):
// such nodes are not read (a node of no group and no version, named by its
// interface, is the same in both layouts), and file.cache entries keyed by
// such a service key are ignored; providers must be re-registered by an
// airnode that writes this layout to be found.
//
// Entries are ephemeral nodes, their parents persistent; each name is encoded
// exactly once, and registering an existing entry is a no-op. A goroutine the
// registry owns drains zk's event channel and tracks the session: after a new
// session (expiry) it re-creates the registry's own entries at once. Each
// own entry has an exists watch: an entry someone else deletes (zkCli
// delete, an admin tool) is re-created at once, said at Warn once per
// deletion ("provider entry ... was deleted from ZooKeeper by someone
// else; re-created"), as Curator's PersistentNode re-creates its node; an
// unregistered entry stays deleted, and an entry another session has
// created at that path meanwhile is left to it (a persistent node of that
// name is replaced). A provider owns the entries of its address and
// service key (foreign.go): the provider entries there that are not its
// session's are removed, at Warn once each, when it registers or starts a
// session (persistent nodes and other sessions' nodes), and for
// HandEditWindow after its own node was deleted or changed by someone
// else (persistent nodes, as they appear; a children watch for the window
// only); and Lookup and Subscribe leave out a persistent node at the
// protocol, address and service key of an ephemeral one (Invalid lists
// it), so a hand-made copy never wins over the live provider's entry. The
// subscriptions of one interface share one watch of its providers node
// (Dubbo's ZookeeperRegistry keeps one child listener per path): one loop
// re-lists the node and re-arms the watch after every event and every
// reconnect, one read per change however many references (groups,
// versions) subscribe, and each subscription takes the providers of its
// group and version and notifies its own listener; the last Stop of an
// interface removes its watch. While ZooKeeper is unreachable, subscribers
// keep their last list: nothing is pushed, and right after a session expiry an empty re-list is held
// back for ExpiryGrace so providers can re-register; an empty list from a
// healthy ZooKeeper is pushed as is. The loss's Warn ("connection lost")
// says what the registry keeps by what it holds: the last provider lists
// (subscriptions), its entries until the session expires (entries); and,
// when the process itself did not run for pauseMin or more since
// ZooKeeper was last heard (a timer due every pauseTick came that late:
// SIGSTOP, a frozen container, a starved CPU share), "this process did
// not run for at least 21s (stopped or starved) of the 27s since ZooKeeper
// was last heard" (paused_for=). A registry with provider entries that
// lost its session and has heard nothing from ZooKeeper for session.timeout
// (the server has expired it and deleted them), or learns of the expiry
// from the server first, says once at Warn "session expired: provider
// entries of SERVICES are not in ZooKeeper until the session is back;
// consumers that reach ZooKeeper will drop this provider", and at Info
// when a new session has re-created them. The time counts from the last
// contact, the last bytes received from a server (unheard_for= in the
// Warn and in "connected again", which also says lost_for=, since the
// loss was noticed), as the server counts from
// when it last heard the client: go-zookeeper notices a dead connection
// only two thirds of session.timeout after that (its receive timeout), so
// the Warn comes within about a server tick of the consumers dropping the
// provider, not that much later. session.timeout here, and in the paragraph
// below, is the timeout the server granted (Registry.SessionTimeout, read
// from its handshake answer), which it bounds to its
// minSessionTimeout..maxSessionTimeout (2 to 20 x tickTime by default:
// 1s asked of a server with tickTime=2000 is granted 4s); the registry
// logs it once at Info when it differs from the timeout asked.
//
// A session gone for good is replaced: once a registry that had a session
// has lost it and heard nothing from ZooKeeper for session.timeout (not
// counting the time every server refused connections), it
// closes its zk handle and opens a new one (a new session, from zxid 0), logged at Warn, as Curator's
// ConnectionState resets its ZooKeeper handle once a connection has failed
// for longer than its timeouts. A ZooKeeper restarted with empty data (no
// persistent volume, a rebuilt ensemble) refuses a client that has seen a
// higher zxid than its own ("Refusing session request for client ... as it
// has seen zxid ..."), and go-zookeeper would redial with that zxid
// forever. It closes the connection at the session handshake without a
// word, and a session it refuses is not one it knows: once every server
// of the list has closed the connection at the handshake twice in a row
// (about a second after the server is back; a lagging ensemble member's
// refusal sends go-zookeeper on to the next server), the registry asks the
// last of them for a brand-new session on a connection of its own (closed
// again at once). A server not serving (loading its data, no quorum), or
// a TCP proxy in front of a ZooKeeper that is down, closes that request
// too: the registry says so at Info, once until a server answers
// ("ZooKeeper closes this session's requests at the handshake ... it is
// not serving"), keeps its session and counts no expiry, however long
// that lasts: nobody can expire a session while ZooKeeper does not serve,
// and an ensemble that serves again (its new leader) resets every
// session's timeout, so the session is resumed, or the server says it
// expired (a quorum loss costs no new session and no re-created entries;
// a server that is down, refusing connections, expires no session either:
// one restarted with its data restores every session with a fresh
// timeout, so the time every server refused connections is not counted
// against the session, downClock, and the registry says once at Info
// that it keeps it, "ZooKeeper is down ..."; a dead path, dials that time
// out, is judged by session.timeout since the last contact). A server
// that closes a session request and grants a brand-new one may just have
// started (it closes requests until its data is loaded): the session is
// tried again once, and a server that closes it again while it serves
// refuses it. A server that
// grants it serves and refuses this session only: the registry opens the
// new session at once, logged at Warn ("ZooKeeper refuses this session",
// naming what the probe saw), instead of waiting session.timeout since
// its last contact. On the
// new session the registry re-creates its entries and every watched
// interface is re-listed and its watch re-armed. Each lost
// session is counted once in counters.Registry.SessionExpiries
// (airnode_registry_session_expiries_total) as soon as the registry knows
// of it: the "session expired" Warn, the redial, or the server's answer.
// From its first connection until Close, the registry is listed in
// counters.RegistryConnections as "zookeeper://<servers>", connected
// while it holds a session (airnode_registry_connected, read when
// scraped).
//
// When a dead path to ZooKeeper heals, the entries are back within tens of
// milliseconds of the new session (they are re-created on zk's
// StateHasSession event), but the session itself can come up to the
// handshake bound plus one second after the heal: a connection dialled
// while the path accepted but forwarded nothing (a proxy or load balancer
// in front of ZooKeeper) waits for ZooKeeper's answer until the bound,
// min(max(connect.timeout, 1s), two thirds of session.timeout), 5s by
// default, and go-zookeeper pauses one second after each failed round of
// its server list before dialling again (a dial that gets no answer at all
// gives up after one second, a refused one at once, and the pause follows).
//
// ZooKeeper is known to be down once there has been no session for
// connect.timeout (since the first contact, or since the session was lost):
// from then on until a session is back, Register queues (check=false) or
// fails (a provider's, check=true: the default), and Lookup,
// Services and a Subscribe's first list answer at once from file.cache
// (Registry.FromCache gives the list's age and how long ZooKeeper has been
// unreachable) or fail naming the servers and that time, instead of waiting
// connect.timeout each — except a Subscribe with check=false, whose first
// list is then empty, the providers following with the session. A first
// contact still waits connect.timeout. A provider entry queued so is in no
// ZooKeeper: Health reports it (airnode_health_warning{check="registry"})
// and a Warn repeats it each minute ("still no session; provider entries
// of ... are not in ZooKeeper") until a session has created it, which an
// Info says with how long it was queued ("queued provider entry of ...
// created in ZooKeeper after ..."). Unregistering it before then takes it
// off the queue and succeeds (Info: "its entry was never created in
// ZooKeeper"): unlike an entry created in a session since lost, whose
// node stays until ZooKeeper expires that session (spi.ErrNotWithdrawn).
//
//	URL key          type      unit  default   bounds      meaning
//	(hosts), backup  hosts     -     -         >= 1        ensemble "h1:2181,h2:2181" (also ?backup=h3:2181)
//	(path)           path      -     ""        node names  chroot: zookeeper://h:2181/staging puts root under /staging
//	root             string    -     airnode   one name    root node; a leading '/' is allowed (Dubbo's "/dubbo"); "" or "/" puts services at /
//	session.timeout  duration  ms    30s       400ms..1h   ZooKeeper session timeout asked (the server bounds it)
//	connect.timeout  duration  ms    5s        10ms..1m    how long a first contact (or a lost session) waits for a session
//	check            bool      -     true      -           Dubbo's registry check: a provider's Register, and a Subscribe with no file.cache entry, without a session within connect.timeout fail; false queues the entry (created when a session comes) and starts a subscription with an empty list
//	file.cache       path      -     ""        -           last known providers of each interface on disk and when each list was read, used when ZooKeeper is down
//	user:password@   string    -     ""        -           digest ACL on created nodes, and the session's auth
//
// Safe for concurrent use. Close deletes the registry's entries, closes the
// session and waits for every goroutine, zk's included.
package zookeeper
