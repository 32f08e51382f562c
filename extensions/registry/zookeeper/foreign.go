package zookeeper

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"syscall"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/spi"
)

// HandEditWindow is how long a provider watches its providers node after
// someone else deleted or changed its own entry (an operator at zkCli, a
// script): a provider entry written at the provider's address meanwhile,
// as a persistent node, is removed as soon as it appears. Outside the
// window a provider watches its own node only (guard); such a node is
// removed at its next registration or session, and consumers ignore it
// meanwhile (preferLive).
const HandEditWindow = time.Minute

// sameProvider is the key of one provider socket serving one service:
// protocol, address and service key (group, interface, version), as
// kernel/directory de-duplicates entries.
func sameProvider(u spi.URL) string {
	return u.Scheme() + "://" + u.Address() + "/" + u.ServiceKey()
}

// sweep removes, from u's providers node, the provider entries at u's
// address and service key (sameProvider) that are not nodes of session
// sid: persistent nodes (an operator's hand-made copy, ephemeralOwner
// 0x0, which would outlive the provider) always, and, with others, the
// ephemeral nodes of other sessions too (a previous incarnation of this
// provider killed before its session expired). A registered provider owns
// the entries of its address: consumers would pick such a node in place
// of its own entry. Each removal is logged at Warn once (the node is gone
// after it). children is the node's children as just read, or nil to read
// them. Errors are logged at Debug: the next trigger sweeps again.
func (r *Registry) sweep(conn *zk.Conn, sid int64, u spi.URL, children []string, others bool) {
	parent := r.categoryPath(u.Interface(), Providers)
	if children == nil {
		var err error
		if children, _, err = conn.Children(parent); err != nil {
			r.log.Debug("cannot list providers to remove foreign entries", "path", parent, "err", err)
			return
		}
	}
	own := escape(fullString(entry(u)))
	key := sameProvider(u)
	for _, c := range children {
		if c == own {
			continue
		}
		e, ok := entryOf(u.Interface(), c)
		if !ok || sameProvider(e) != key {
			continue
		}
		path := parent + "/" + c
		_, stat, err := conn.Exists(path)
		if err != nil || stat == nil || stat.EphemeralOwner == sid || (stat.EphemeralOwner != 0 && !others) {
			continue
		}
		if r.ownNode(u.Interface(), c) {
			continue // another entry of this registry: its session's once created
		}
		if err := conn.Delete(path, stat.Version); err != nil {
			if !errors.Is(err, zk.ErrNoNode) && !errors.Is(err, zk.ErrBadVersion) {
				r.log.Debug("cannot remove foreign entry", "path", path, "err", err)
			}
			continue
		}
		if stat.EphemeralOwner != 0 {
			if ago, pid, ok := predecessor(u, e); ok {
				// a kill -9 restart's usual leftover, its session not expired yet
				r.log.Info(fmt.Sprintf("removed an earlier process's entry at this provider's address (session 0x%x, started %v before this one, %s)", stat.EphemeralOwner, ago, pid),
					"url", u.String(), "removed", e.Redacted(), "path", path)
				continue
			}
		}
		why := "a persistent node (ephemeralOwner 0x0: written by hand or by a script), which would outlive this provider"
		if stat.EphemeralOwner != 0 {
			why = fmt.Sprintf("a node of another session (0x%x: another process publishing this address, or an earlier one whose timestamp and pid do not say so)", stat.EphemeralOwner)
		}
		r.log.Warn("removed a provider entry at this provider's address that is not its own: "+why+
			"; a registered provider owns the entries of its address and service key (to change its weight, restart it with the new value)",
			"url", u.String(), "removed", e.Redacted(), "path", path)
	}
}

// Keys of a provider entry that say which process wrote it (the kernel
// sets them at export): its start in ms since the epoch, and its pid.
const (
	keyTimestamp = "timestamp"
	keyPID       = "pid"
)

// predecessor reports whether e, another session's entry at own's
// address and service key, is evidently an earlier process's at this
// address (a provider killed and restarted before its session expired):
// its timestamp (the start it published) is before own's, and its pid is
// own's (a restarted container's pid 1) or not a running process on
// this machine. It returns how much earlier it started, and
// what its pid says. A
// live process publishing the address, or an entry without an earlier
// timestamp, is not one: its removal stays a Warn.
func predecessor(own, e spi.URL) (ago time.Duration, pidSays string, ok bool) {
	mine, err1 := own.Int(keyTimestamp, 0)
	theirs, err2 := e.Int(keyTimestamp, 0)
	if err1 != nil || err2 != nil || mine <= 0 || theirs <= 0 || theirs >= mine {
		return 0, "", false
	}
	pid, err := e.Int(keyPID, 0)
	if err != nil {
		return 0, "", false
	}
	mp, _ := own.Int(keyPID, 0)
	switch {
	case pid <= 0:
		return 0, "", false // nothing says which process: it may be a live one
	case pid == mp:
		pidSays = fmt.Sprintf("pid %d, this process's (a restarted container)", pid)
	case processRunning(int(pid)):
		return 0, "", false
	default:
		pidSays = fmt.Sprintf("pid %d not running", pid)
	}
	return time.Duration(mine-theirs) * time.Millisecond, pidSays, true
}

// processRunning reports whether a process with id pid runs on this
// machine, as far as it can tell (true when it cannot).
func processRunning(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return !errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone)
}

// ownNode reports whether name, a child of iface's providers node, is
// the node of one of the registry's registered URLs.
func (r *Registry) ownNode(iface, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.registered {
		if v.Interface() == iface && category(v) == Providers && escape(fullString(entry(v))) == name {
			return true
		}
	}
	return false
}

// entryOf decodes the child name of iface's providers node into its
// provider URL, without logging (decodeEntry's, for sweep).
func entryOf(iface, name string) (spi.URL, bool) {
	s, err := url.QueryUnescape(name)
	if err != nil {
		return spi.URL{}, false
	}
	e, err := spi.Parse(s)
	if err != nil {
		return spi.URL{}, false
	}
	return fromEntry(e, iface)
}

// preferLive drops, from the providers of iface as decoded (all, strs:
// shared, not modified), a persistent node's entry (ephemeralOwner 0x0)
// at the protocol, address and service key of an ephemeral one: an
// entry a provider writes is ephemeral and ends with its session, and a
// persistent one beside it was written by someone else (an operator's
// hand-made copy with another weight), which the directory's rule (the
// highest timestamp, then the entry seen last) could pick in place of the
// live provider's. Only entries sharing such a key cost a read
// (Exists): a list without any is returned as is. Each dropped node is
// logged at Warn once while it stays, and listed by Invalid.
func (r *Registry) preferLive(conn *zk.Conn, iface string, all []spi.URL, strs []string) ([]spi.URL, []string) {
	groups := make(map[string][]int, len(all))
	dup := false
	for i, u := range all {
		k := sameProvider(u)
		groups[k] = append(groups[k], i)
		dup = dup || len(groups[k]) > 1
	}
	r.decoded.mu.Lock()
	if !dup {
		delete(r.decoded.foreign, iface)
		r.decoded.mu.Unlock()
		return all, strs
	}
	names := make(map[int]string, len(all))
	if n := r.decoded.nodes[iface]; n != nil {
		for c, i := range n.index {
			if i >= 0 && i < len(all) && n.list[i].String() == strs[i] {
				names[i] = c
			}
		}
	}
	r.decoded.mu.Unlock()
	parent := r.categoryPath(iface, Providers)
	drop := map[int]string{} // index -> node name
	for _, idx := range groups {
		if len(idx) < 2 {
			continue
		}
		var live, persistent []int
		for _, i := range idx {
			name, ok := names[i]
			if !ok {
				continue
			}
			_, stat, err := conn.Exists(parent + "/" + name)
			if err != nil || stat == nil {
				continue
			}
			if stat.EphemeralOwner == 0 {
				persistent = append(persistent, i)
			} else {
				live = append(live, i)
			}
		}
		if len(live) == 0 {
			continue
		}
		for _, i := range persistent {
			drop[i] = names[i]
		}
	}
	foreign := map[string]string{}
	for i, name := range drop {
		foreign[name] = fmt.Sprintf("persistent node (ephemeralOwner 0x0, not a provider's session) at the address of a live provider entry: consumers take the live provider's entry (%s)", all[i].Redacted())
	}
	r.decoded.mu.Lock()
	old := r.decoded.foreign[iface]
	if r.decoded.foreign == nil {
		r.decoded.foreign = map[string]map[string]string{}
	}
	r.decoded.foreign[iface] = foreign
	r.decoded.mu.Unlock()
	for name := range foreign {
		if _, said := old[name]; !said {
			r.log.Warn("a persistent provider node at the address of a live provider's entry is ignored; consumers take the live provider's (ephemeral) entry, and the provider removes such a node when it registers",
				"path", parent+"/"+name)
		}
	}
	if len(drop) == 0 {
		return all, strs
	}
	outU := make([]spi.URL, 0, len(all)-len(drop))
	outS := make([]string, 0, len(all)-len(drop))
	for i := range all {
		if _, ok := drop[i]; !ok {
			outU, outS = append(outU, all[i]), append(outS, strs[i])
		}
	}
	return outU, outS
}

// foreignNames returns, sorted, the nodes of iface's providers node that
// preferLive last dropped, and why.
func (d *decodedNodes) foreignNames(iface string) ([]string, map[string]string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f := d.foreign[iface]
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, f
}
