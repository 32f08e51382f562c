package pluginhost

import (
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// binaryWatch is how long the plugin's binary must stay the same version
// (two looks this far apart agree) before awaitBinaryChange takes it as
// changed, so that a file still being written is not started; without a
// watch (see binaryBackstop) it is also the poll period.
const binaryWatch = 200 * time.Millisecond

// binaryBackstop is how often awaitBinaryChange looks at the binary
// although its directory's watch reported nothing: inotify misses
// changes made by another machine on a network file system, and a change
// of a symlink's target outside the watched directories.
const binaryBackstop = 2 * time.Second

// fileStamp identifies one version of a file: its identity (device and
// inode, through os.SameFile), size and modification time. Its zero
// value is a missing file.
type fileStamp struct {
	fi os.FileInfo
}

// binaryStamp returns path's fileStamp (the zero one when it cannot be
// read).
func binaryStamp(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{fi: fi}
}

// same reports whether s and o are the same version of a file.
func (s fileStamp) same(o fileStamp) bool {
	if s.fi == nil || o.fi == nil {
		return s.fi == nil && o.fi == nil
	}
	return os.SameFile(s.fi, o.fi) && s.fi.Size() == o.fi.Size() && s.fi.ModTime().Equal(o.fi.ModTime()) && s.fi.Mode() == o.fi.Mode()
}

// binaryWatcher returns an fsnotify watcher of the directory of path
// (an upgrade's mv replaces the file's inode, which a watch of the file
// itself would lose) and, when path is a symlink, of its target's
// directory, with the names whose events matter; nil when no watcher
// can be had (inotify's instance or watch limit), and the caller polls.
func binaryWatcher(path string) (*fsnotify.Watcher, map[string]bool) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, nil
	}
	names := map[string]bool{path: true}
	if err := w.Add(filepath.Dir(path)); err != nil {
		w.Close()
		return nil, nil
	}
	if t, err := filepath.EvalSymlinks(path); err == nil && t != path {
		if w.Add(filepath.Dir(t)) == nil {
			names[t] = true
		}
	}
	return w, names
}

// binaryOps are the events of a watched name that may be a new version
// of the binary: created or moved there, written, moved away, its mode
// changed (chmod +x after the copy).
const binaryOps = fsnotify.Create | fsnotify.Write | fsnotify.Rename | fsnotify.Chmod

// awaitBinaryChange waits, after a failed handover from the process of
// old, until the plugin's binary is no longer the version stamp (and
// has stayed unchanged for binaryWatch, so that a file still being
// written is not started), and reports true; false as soon as the
// process of old is no longer the running one (it exited: the supervisor
// restarts it) or the host closes or shuts down. It looks at the file
// when its directory's watch reports an event for it, every
// binaryBackstop, and once binaryWatch after it begins (a change made
// during the failed launch); without a watcher, every binaryWatch. The
// watcher lives only while it waits.
func (p *proc) awaitBinaryChange(old *startTail, stamp fileStamp) bool {
	w, names := binaryWatcher(p.path)
	var events <-chan fsnotify.Event
	var errs <-chan error
	period := binaryWatch // no watcher: poll
	if w != nil {
		defer w.Close()
		events, errs, period = w.Events, w.Errors, binaryBackstop
	}
	backstop := time.NewTicker(period)
	defer backstop.Stop()
	look := time.NewTimer(binaryWatch) // a change made before the watch began
	defer look.Stop()
	var seen fileStamp // the changed version last seen, at seenAt
	var seenAt time.Time
	changed := false
	for {
		p.mu.Lock()
		running, stateChanged := p.tail == old && p.state == StateRunning, p.changed
		p.mu.Unlock()
		if !running || p.h.shuttingDown.Load() {
			return false
		}
		select {
		case <-p.h.done:
			return false
		case <-p.h.shutdown:
			return false
		case <-stateChanged:
			continue
		case ev, ok := <-events:
			if !ok {
				return false // closed: only w.Close does
			}
			if names[filepath.Clean(ev.Name)] && ev.Op&binaryOps != 0 {
				look.Reset(binaryWatch)
			}
			continue
		case <-errs: // an overflow: events were lost
			look.Reset(binaryWatch)
			continue
		case <-look.C:
		case <-backstop.C:
		}
		now := binaryStamp(p.path)
		if now.fi == nil || now.same(stamp) {
			continue
		}
		if changed && now.same(seen) {
			if time.Since(seenAt) >= binaryWatch {
				return true
			}
			continue // look fires binaryWatch after seenAt
		}
		changed, seen, seenAt = true, now, time.Now()
		look.Reset(binaryWatch) // look again: it must stay this version
	}
}
