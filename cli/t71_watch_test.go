package cli

import (
	"regexp"
	"testing"
)

// tester71 #12: registry watch demo.Echo printed "0 providers" while a
// provider was listed under group g1, version 1.0.0; call names it ("left
// out: ... is in group g1"), and watch now does too.
func TestT71_12_WatchNamesProvidersOfAnotherGroup(t *testing.T) {
	t.Parallel()
	reg := "file://" + t.TempDir()
	p := serveWith(t, "127.0.0.1:0", reg, "-p", "group=g1", "-p", "version=1.0.0")
	w := startWatch(t, reg, "demo.Echo")
	re := regexp.MustCompile(`demo\.Echo: 0 providers; left out: ` + regexp.QuoteMeta(p.addr) + ` is in group g1, version 1\.0\.0 \(watch g1/demo\.Echo:1\.0\.0\)$`)
	waitFor(t, "watch naming the g1 provider", func() bool { return w.has(re) })
}
