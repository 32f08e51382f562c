package file

import (
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// watchHub is the process's one inotify instance (an fsnotify watcher),
// shared by every Registry of the process that subscribes, whatever its
// directory: one watch per providers directory, however many registries
// subscribe to it. It is reference-counted: the first Registry to
// subscribe creates it, the last one to close closes it and waits for
// its loop. Before, each Registry had its own, so one process
// with 500 consumer nodes took every inotify instance of its user (128 on
// Debian), and the other 372 nodes each logged the fallback Warn.
type watchHub struct {
	mu   sync.Mutex
	w    *fsnotify.Watcher                 // nil when no Registry holds it
	refs int                               // registries holding w
	dirs map[string]map[*Registry]struct{} // watched directory -> registries subscribed to it
	done chan struct{}                     // closed when w's loop returns
}

// hub is the process's watchHub.
var hub watchHub

// acquire takes a reference on the process's watcher, creating it (and
// its loop) when no Registry holds it; the error is newWatcher's
// (inotify unavailable). Called with r.mu held (lock order: r.mu, then
// hub.mu).
func (h *watchHub) acquire() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w == nil {
		w, err := newWatcher()
		if err != nil {
			return err
		}
		h.w, h.dirs, h.done = w, map[string]map[*Registry]struct{}{}, make(chan struct{})
		go h.loop(w, h.done)
	}
	h.refs++
	return nil
}

// add records that r subscribes to dir, watching dir when it is the
// first registry to; the error is the watch's (max_user_watches).
func (h *watchHub) add(r *Registry, dir string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w == nil {
		return nil
	}
	rs := h.dirs[dir]
	if rs == nil {
		if err := h.w.Add(dir); err != nil {
			return err
		}
		rs = map[*Registry]struct{}{}
		h.dirs[dir] = rs
	}
	rs[r] = struct{}{}
	return nil
}

// remove records that r no longer subscribes to dir, removing the watch
// when no registry does.
func (h *watchHub) remove(r *Registry, dir string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeLocked(r, dir)
}

func (h *watchHub) removeLocked(r *Registry, dir string) {
	rs := h.dirs[dir]
	if rs == nil {
		return
	}
	delete(rs, r)
	if len(rs) == 0 {
		delete(h.dirs, dir)
		_ = h.w.Remove(dir)
	}
}

// rewatch watches dir again after it was removed and re-created (the
// watch on a removed directory is gone); the error is the new watch's.
func (h *watchHub) rewatch(dir string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w == nil || h.dirs[dir] == nil {
		return nil
	}
	_ = h.w.Remove(dir) // the old watch, if fsnotify still has it
	return h.w.Add(dir)
}

// release drops r's reference, and its directories; the last one closes
// the watcher and waits for its loop. Called without r.mu.
func (h *watchHub) release(r *Registry) {
	h.mu.Lock()
	for dir := range h.dirs {
		h.removeLocked(r, dir)
	}
	h.refs--
	if h.refs > 0 {
		h.mu.Unlock()
		return
	}
	w, done := h.w, h.done
	h.w, h.dirs, h.done, h.refs = nil, nil, nil, 0
	h.mu.Unlock()
	_ = w.Close()
	<-done
}

// loop forwards w's events to the subscriptions of the event's directory,
// in every registry subscribed to it, until w is closed.
func (h *watchHub) loop(w *fsnotify.Watcher, done chan struct{}) {
	defer close(done)
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			for _, r := range h.registries(w, filepath.Dir(ev.Name)) {
				r.wakeDir(filepath.Dir(ev.Name))
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			rs := h.registries(w, "")
			for i, r := range rs {
				if i == 0 { // one line per process, not per registry
					r.log.Warn("watch error; polling continues", "err", err)
				}
				r.wakeAll()
			}
		}
	}
}

// registries returns the registries subscribed to dir ("": to any), if w
// is still the hub's watcher.
func (h *watchHub) registries(w *fsnotify.Watcher, dir string) []*Registry {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.w != w {
		return nil
	}
	var out []*Registry
	seen := map[*Registry]bool{}
	for d, rs := range h.dirs {
		if dir != "" && d != dir {
			continue
		}
		for r := range rs {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}

// warned holds the inotify limits (instances, watches) whose fallback
// Warn this process logged: once per process, not once per registry.
var warned struct {
	mu    sync.Mutex
	kinds map[string]bool
}

// firstWarn reports whether kind's fallback Warn is still to be logged
// in this process, and marks it logged.
func firstWarn(kind string) bool {
	warned.mu.Lock()
	defer warned.mu.Unlock()
	if warned.kinds[kind] {
		return false
	}
	if warned.kinds == nil {
		warned.kinds = map[string]bool{}
	}
	warned.kinds[kind] = true
	return true
}
