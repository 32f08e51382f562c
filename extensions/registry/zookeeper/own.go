package zookeeper

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/airnode/airnode/spi"
)

// guard watches u's node, one of the registry's own entries, just
// created on conn's session, with an exists watch (ExistsW), and
// re-creates it at once when someone else deletes it (a hand-run zkCli
// delete, an admin tool), saying so once per deletion at Warn: an entry
// the process has not unregistered stays in ZooKeeper, as the file
// registry re-creates a removed entry file and as Curator's
// PersistentNode recipe re-creates its ephemeral node. An exists watch on
// each own entry fires only for that node; a children watch of the
// providers node would fire, and cost a read of the whole node, on every
// change of every provider of the interface in every provider process.
// Data changes re-arm the watch (consumers read entry names, not data).
// The watch ends with its session (expiry, redial or Close: zk ends
// every watch; the new session re-creates and guards the entries) and
// when the entry is no longer registered (Unregister: it stays deleted).
// One guard per entry and session.
func (r *Registry) guard(conn *zk.Conn, u spi.URL) {
	key := u.String()
	sid := conn.SessionID()
	r.mu.Lock()
	if r.closed || sid == 0 || r.guarded[key] == sid {
		r.mu.Unlock()
		return
	}
	if _, ok := r.registered[key]; !ok {
		r.mu.Unlock()
		return
	}
	r.guarded[key] = sid
	r.wg.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.wg.Done()
		defer func() {
			r.mu.Lock()
			if r.guarded[key] == sid {
				delete(r.guarded, key)
			}
			r.mu.Unlock()
		}()
		r.guardLoop(conn, sid, u)
	}()
}

// guardLoop is guard's goroutine: it arms the exists watch of u's node
// on session sid and re-creates the node whenever it is gone, until the
// watch ends with the session or u is no longer registered. For a
// provider's entry it also removes the foreign entries at its address
// (sweep): at the start (a registration, a new session: other sessions'
// nodes too), and, for HandEditWindow after someone else deleted or
// changed its node, persistent nodes as they appear, with a children
// watch of the providers node for the window only.
func (r *Registry) guardLoop(conn *zk.Conn, sid int64, u spi.URL) {
	path := r.nodePath(u)
	provider := category(u) == Providers
	parent := r.categoryPath(u.Interface(), Providers)
	if provider {
		r.sweep(conn, sid, u, nil, true)
	}
	var (
		own   <-chan zk.Event // the exists watch of u's node, when armed
		dir   <-chan zk.Event // the children watch of parent, armed during the window
		until time.Time       // end of the hand-edit window
	)
	for {
		if !r.owns(conn, sid, u) {
			return
		}
		gone := false
		if own == nil {
			exists, _, ch, err := conn.ExistsW(path)
			if err != nil { // the connection is lost: a new session re-creates and guards the entries
				r.log.Debug("cannot watch own entry", "url", u.String(), "err", err)
				return
			}
			own, gone = ch, !exists
			if gone {
				own = nil // the exists watch of a missing node fires at its creation: ours
			}
		}
		if !gone {
			if dir == nil && provider && time.Now().Before(until) {
				children, _, ch, err := conn.ChildrenW(parent)
				if err == nil {
					dir = ch
					r.sweep(conn, sid, u, children, false)
				}
			}
			var end <-chan time.Time
			var timer *time.Timer
			if dir != nil {
				timer = time.NewTimer(time.Until(until))
				end = timer.C
			}
			select {
			case ev, ok := <-own:
				own = nil
				if !ok || ev.Type == zk.EventNotWatching {
					stopTimer(timer)
					return
				}
				switch ev.Type {
				case zk.EventNodeDeleted:
					gone = true
				case zk.EventNodeDataChanged: // consumers read names, not data; a hand edit: watch for copies
					if provider {
						until = time.Now().Add(HandEditWindow)
						r.sweep(conn, sid, u, nil, false)
					}
				}
			case ev, ok := <-dir:
				dir = nil
				if !ok || ev.Type == zk.EventNotWatching {
					stopTimer(timer)
					return
				}
			case <-end:
				dir = nil // the zk watch fires once more into nobody's hands
			}
			stopTimer(timer)
			if !gone {
				continue
			}
		}
		if conn.SessionID() != sid || !r.owns(conn, sid, u) {
			return
		}
		err := r.recreate(conn, u)
		if err == nil {
			kind := "provider"
			if category(u) == Consumers {
				kind = "consumer"
			}
			r.log.Warn(kind+" entry "+u.String()+" was deleted from ZooKeeper by someone else; re-created",
				"url", u.String(), "path", path)
			if provider {
				until = time.Now().Add(HandEditWindow)
				r.sweep(conn, sid, u, nil, false)
			}
			continue
		}
		if conn.SessionID() != sid || conn.State() != zk.StateHasSession {
			return // the session's end re-creates it
		}
		r.log.Warn("entry was deleted from ZooKeeper by someone else; cannot re-create it, retrying",
			"url", u.String(), "err", err)
		r.mu.Lock()
		if _, ok := r.registered[u.String()]; ok {
			r.pending[u.String()] = u
			r.pendingErr = err
		}
		h := r.handle
		r.mu.Unlock()
		if h != nil {
			select {
			case h.kick <- struct{}{}: // the session loop retries pending entries
			default:
			}
		}
		return
	}
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}

// owns reports whether u is still registered, the registry open and conn
// its current zk handle on session sid.
func (r *Registry) owns(conn *zk.Conn, sid int64, u spi.URL) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.registered[u.String()]
	return ok && !r.closed && r.conn == conn && r.guarded[u.String()] == sid
}

// recreate creates u's node again after someone else deleted it. A
// persistent node of its name written meanwhile (an operator's copy,
// which would outlive the provider) is replaced. An
// entry another session has created meanwhile (another process
// registering the same URL) is left to it, not replaced: two guards of
// one entry would otherwise delete each other's node forever. When u was
// unregistered while the node was being created, the node is deleted
// again, so a guard never brings an unregistered entry back.
func (r *Registry) recreate(conn *zk.Conn, u spi.URL) error {
	path := r.nodePath(u)
	if err := r.ensurePath(conn, r.categoryPath(u.Interface(), category(u))); err != nil {
		return err
	}
	data := []byte(fullString(entry(u)))
	_, err := conn.Create(path, data, zk.FlagEphemeral, r.acl)
	if errors.Is(err, zk.ErrNodeExists) {
		// a persistent node of that name (an operator's copy) is not
		// another process's entry: replace it, in one transaction
		if _, stat, serr := conn.Exists(path); serr == nil && stat != nil && stat.EphemeralOwner == 0 {
			_, err = conn.Multi(&zk.DeleteRequest{Path: path, Version: stat.Version},
				&zk.CreateRequest{Path: path, Data: data, Acl: r.acl, Flags: zk.FlagEphemeral})
			if err != nil {
				err = zk.ErrNodeExists // it changed meanwhile: leave it to the next event
			}
		}
	}
	if err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return fmt.Errorf("zookeeper registry: create %s: %w", path, err)
	}
	r.mu.Lock()
	_, ok := r.registered[u.String()]
	r.mu.Unlock()
	if !ok && err == nil {
		_ = conn.Delete(path, -1)
	}
	return nil
}
