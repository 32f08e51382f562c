package counters

// DirectoryCounters count what consumers' directories (kernel/directory)
// did against registry notifications that dropped connected providers.
type DirectoryCounters struct {
	// EmptyProtections counts empty-protection episodes: a notification
	// that would have left a reference no provider while some were
	// connected, which the directory kept (URL key
	// registry.empty.protection). One per episode, not per provider.
	EmptyProtections Counter
	// DampedRemovals counts damped removals: a notification that dropped
	// more than registry.removal.damping percent of a reference's
	// connected providers at once, whose removal waited
	// registry.removal.grace. One per episode.
	DampedRemovals Counter
}

// Directory holds the process's directory counters.
var Directory DirectoryCounters
