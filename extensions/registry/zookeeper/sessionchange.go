package zookeeper

import "time"

// Session states of a SessionChange.
const (
	// SessionDisconnected: the connection to ZooKeeper is lost; the
	// registry keeps its last provider lists and its session may still
	// come back.
	SessionDisconnected = "disconnected"
	// SessionExpired: nothing was heard from ZooKeeper for
	// session.timeout, so the session is gone (its ephemeral entries
	// with it); the registry opens a new one.
	SessionExpired = "expired"
	// SessionConnected: a session is up again after a loss; the
	// subscriptions list their providers afresh.
	SessionConnected = "connected"
)

// SessionChange is a change of the registry's ZooKeeper session after
// its first session was up (OnSessionChange): what `airnode registry
// watch` prints, so that a script reading it can tell "no change" from
// "a list kept while ZooKeeper is away".
type SessionChange struct {
	State string // SessionDisconnected, SessionExpired or SessionConnected
	// NewSession, with SessionConnected: the session is a new one (the
	// old one expired, on the server or by session.timeout here).
	NewSession bool
	// Unheard is how long ZooKeeper had not been heard: at a loss, since
	// the last bytes from it (up to a third of session.timeout before the
	// loss is noticed); at an expiry or a reconnection, the whole gap.
	// 0 when unknown.
	Unheard time.Duration
}

// OnSessionChange makes the registry call fn for every change of its
// ZooKeeper session after the first session was up: a loss, an expiry,
// a reconnection (the same changes its Warn and Info lines say). fn is
// called with the registry's lock held and must not block or call the
// registry. Set it before the first Subscribe.
func (r *Registry) OnSessionChange(fn func(SessionChange)) {
	r.mu.Lock()
	r.stateHook = fn
	r.mu.Unlock()
}

// sessionChangedLocked gives c to OnSessionChange's function, if any.
// Caller holds r.mu.
func (r *Registry) sessionChangedLocked(c SessionChange) {
	if r.stateHook != nil {
		r.stateHook(c)
	}
}
