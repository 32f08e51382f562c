package kernel

import (
	"context"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/spi"
)

// A registry's Register that ignores ctx and blocks past Export's ctx is
// left running (Export returns a *LeftRunningError); when it then
// succeeds, the provider entry it wrote is withdrawn again: Export failed,
// so nothing may advertise the service (was: the entry stayed, consumers
// called a service whose Export had returned an error).
func TestExportRegisterThatSucceedsLateIsUndone(t *testing.T) {
	gate := make(chan struct{})
	reg := &faultRegistry{name: "latereg", gate: gate, register: block}
	cat := testCatalogs(t)
	n, logs := faultNode(t, cat, withFaultRegistry(t, cat, reg))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := n.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	wantLeftRunning(t, err, logs, `kernel: export demo.Echo: registry "latereg" Register of demo.Echo`)

	// Another client of the same (memory) registry sees what consumers see.
	look, err := reg.in.Build(spi.MustParse("memory://x"))
	if err != nil {
		t.Fatal(err)
	}
	defer look.Close()
	close(gate) // the Register goes on and succeeds
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := look.Lookup(context.Background(), spi.MustParse("airnode:///demo.Echo"))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 && len(logs.find("kernel: undoing a step")) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5s after the late Register returned, the registry still lists %v (undo logged: %v)", got, logs.find("kernel: undoing a step"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
