package kernel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/spi"
)

// tester62 finding 4: a weight over what the balancers use
// (2147483647) was clamped by them without a word, and published as
// written. Export now warns once and publishes the clamped weight.
func TestT62_HugeWeightWarnsAndIsPublishedClamped(t *testing.T) {
	var log logbuf.Buffer
	n := NewNode(testCatalogs(t), WithLogger(slog.New(slog.NewTextHandler(&log, nil))), WithShutdownWait(0))
	t.Cleanup(func() { _ = n.Close() })
	e, err := n.Export(ctxT(t), demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo?weight=99999999999999"))
	if err != nil {
		t.Fatal(err)
	}
	if w, _ := e.URL().Param("weight"); w != "2147483647" {
		t.Errorf("published weight %q, want 2147483647", w)
	}
	want := "export demo.Echo: weight 99999999999999 is over 2147483647, the most a balancer uses: published as 2147483647"
	if got := log.String(); strings.Count(got, "level=WARN") != 1 || !strings.Contains(got, want) {
		t.Errorf("log:\n%s\nwant one WARN %q", got, want)
	}
	// tester99 #3: the node's logger says component=kernel; the line
	// added it again ("component=kernel component=kernel")
	if got := log.String(); strings.Count(got, "component=") != strings.Count(got, "\n") {
		t.Errorf("log:\n%s\nwant one component= a line", got)
	}
}
