package kernel

// Ignored returns why the providers the registry last listed for the
// reference's interface were left out, one line each
// (directory.Directory.Ignored): another transport, or another group or
// version than the reference asks for ("127.0.0.1:20880 is in group g1,
// version 1.0 (the reference asks for no group, version 2.0)"), and a
// listed provider that has left the registry. Nil when none was, and for
// a direct reference; never blocks. The "no provider available" error
// carries the same lines; a caller waiting for a first provider
// (airnode call) stops at once when providers are listed but all left
// out, since waiting will not change that.
func (r *Reference) Ignored() []string {
	if r.dir == nil {
		return nil
	}
	return r.dir.Ignored()
}
