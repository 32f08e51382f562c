package netaccept

// MinFDReserve is the fewest file descriptors DefaultAccepts keeps from
// consumer connections for the provider's own use: its registry and
// ZooKeeper sessions, plugin processes, its own outgoing calls, log files.
const MinFDReserve = 64

// OpenFileLimit returns the process's RLIMIT_NOFILE soft limit, read from
// the system now (getrlimit(2)); ok is false where the system has no such
// limit, cannot report it, or reports it unlimited (RLIM_INFINITY). Go
// raises the soft limit to the hard one at start on Unix (os package), so
// this is usually `ulimit -Hn` of the shell that started the process.
func OpenFileLimit() (n uint64, ok bool) { return openFileLimit() }

// DefaultAccepts returns how many consumer connections a provider accepts
// by default with an open-file limit of n descriptors (OpenFileLimit): n
// minus a reserve of max(MinFDReserve, n/10), the reserve being at most
// n/2, so never fewer than half of n (n = 1024: 922; n = 20000: 18000;
// n = 100: 50). At least 1, at most math.MaxInt32.
func DefaultAccepts(n uint64) int {
	reserve := min(max(MinFDReserve, n/10), n/2)
	return int(min(max(n-reserve, 1), 1<<31-1))
}
