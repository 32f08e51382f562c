package file

import "github.com/fsnotify/fsnotify"

// SetNewWatcher makes Subscribe create its watcher with f until restore
// is called (tester22 finding 2: inotify unavailable).
func SetNewWatcher(f func() (*fsnotify.Watcher, error)) (restore func()) {
	old := newWatcher
	newWatcher = f
	return func() { newWatcher = old }
}

// IdleScanner returns a poll of category directory dir of the registry
// directory regDir, as a subscription runs it (full: a file event came):
// whether the list changed and its length.
func IdleScanner(dir, regDir string) func(full bool) (changed bool, n int, err error) {
	s := newScanner(dir, regDir)
	return func(full bool) (bool, int, error) {
		c, err := s.scan(full)
		return c, len(s.list), err
	}
}
