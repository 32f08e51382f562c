package kernel

// Connections returns how many connections the reference's listed
// providers should hold (asked: URL key connections, default 1, per
// provider) and how many of them are up now, having answered their first
// ping (up). A provider that accepts fewer connections than asked (out of
// file descriptors, say) leaves up < asked: the others keep redialing
// (reconnect.backoff). Safe for concurrent use.
func (r *Reference) Connections() (up, asked int) {
	for _, inv := range r.dir.All() {
		for {
			f, ok := inv.(*filterInvoker)
			if !ok {
				break
			}
			inv = f.Invoker
		}
		ri, ok := inv.(*remoteInvoker)
		if !ok {
			continue
		}
		asked += len(ri.conns)
		for _, c := range ri.conns {
			if c.ready() {
				up++
			}
		}
	}
	return up, asked
}
