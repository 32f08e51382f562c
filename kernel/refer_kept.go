package kernel

import "github.com/airnode/airnode/kernel/directory"

// Kept returns the providers the reference still calls although its
// registry's last notification no longer lists them, sorted by address,
// each with why ("kept by empty protection", "kept by removal damping")
// and since when: providers it is connected to, kept because the
// registry listed none of them (URL key registry.empty.protection,
// default true) or dropped more than registry.removal.damping percent
// of them at once (default 25, for registry.removal.grace, default
// 30s); a kept provider goes when its connection closes, it announces
// its shutdown, or it answers SERVICE_NOT_FOUND (it unexported the
// service). Providers() includes them. Nil when none is kept; never blocks.
func (r *Reference) Kept() []directory.Kept { return r.dir.Kept() }
