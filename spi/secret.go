package spi

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// secretKeys is the process-wide list of keys marked secret with
// MarkSecretKey, besides "token": copied on write, read without a lock.
var (
	secretMu   sync.Mutex
	secretKeys atomic.Pointer[[]string]
)

// MarkSecretKey marks URL key k secret for the whole process, from now
// on: IsSecretKey then reports true for k and for a method's "M.k"
// (any key ending in "."+k), so URL.Redacted, and every log line, error
// and registry listing that prints URLs through it, shows "***" for its
// value. The kernel's catalogs call it when an extension declaring a
// KeyDoc with Secret is registered (extension.Point.Register); an
// extension's tests may call it directly. A mark is never removed:
// hiding a value is always safe. An empty key is ignored. Safe for
// concurrent use with itself and with IsSecretKey.
func MarkSecretKey(k string) {
	if k == "" || k == AttachmentToken {
		return
	}
	secretMu.Lock()
	defer secretMu.Unlock()
	var cur []string
	if p := secretKeys.Load(); p != nil {
		cur = *p
	}
	if slices.Contains(cur, k) {
		return
	}
	next := append(slices.Clone(cur), k)
	secretKeys.Store(&next)
}

// SecretKeys returns the keys marked with MarkSecretKey, in the order
// marked, "token" not included. The result is the caller's.
func SecretKeys() []string {
	if p := secretKeys.Load(); p != nil {
		return slices.Clone(*p)
	}
	return nil
}

// isMarkedSecret reports whether k is, or ends in "." followed by, a key
// marked with MarkSecretKey.
func isMarkedSecret(k string) bool {
	p := secretKeys.Load()
	if p == nil {
		return false
	}
	for _, s := range *p {
		if k == s || len(k) > len(s) && k[len(k)-len(s)-1] == '.' && strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}
