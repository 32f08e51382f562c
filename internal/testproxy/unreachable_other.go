//go:build !linux

package testproxy

// Unreachable needs Linux (a listener whose full accept queue drops SYNs);
// elsewhere it skips the test.
func (p *Proxy) Unreachable(on bool) {
	p.t.Skip("testproxy: Unreachable needs Linux")
}
