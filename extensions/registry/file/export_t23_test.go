package file

import "time"

// SetStaleWarnEvery makes a subscription that cannot read its providers
// directory repeat its Warn every d until restore is called.
func SetStaleWarnEvery(d time.Duration) (restore func()) {
	old := staleWarnEvery
	staleWarnEvery = d
	return func() { staleWarnEvery = old }
}

// ResetInotifyWarn forgets that the inotify fallback Warn was logged in
// this process (it is logged once per process and kind of limit).
func ResetInotifyWarn() {
	warned.mu.Lock()
	defer warned.mu.Unlock()
	clear(warned.kinds)
}
