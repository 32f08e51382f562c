package cli

import (
	"strings"
	"testing"
)

// list --explain's KEYS row of shutdown.timeout and shutdown.wait showed
// a reference URL's value as the provider's ("5s  key
// shutdown.timeout"), while Refer warns that a reference's has no effect
// (kernel.ReferWarnings, kind "node": the node's own setting). The row
// shows the node's value, as the configuration exports it or the node's
// default, and under it that the reference's has no effect, from the same
// warning.
func TestExplainNodeKeysOfAReferenceHaveNoEffect(t *testing.T) {
	const url = "airnode://127.0.0.1:39101/demo.Echo?shutdown.timeout=5s&shutdown.wait=1s"
	code, out, errOut := airnode(t, bundled(t), "list", "--explain", url)
	if code != 0 {
		t.Fatalf("--explain: exit %d, stderr %s", code, errOut)
	}
	const why = "it is the node's (kernel.WithShutdownTimeout, serve --shutdown-timeout; an export's URL key), which bounds the node's Close for the calls in flight of all its references"
	want := []string{
		"shutdown.timeout service 10s node (shutdown.timeout)",
		"service (shutdown.timeout=5s has no effect on a reference: " + why + ")",
	}
	if rows := explainRows(t, out, "shutdown.timeout"); strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("shutdown.timeout rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
	if rows := explainRows(t, out, "shutdown.wait"); len(rows) != 2 || rows[0] != "shutdown.wait service 2s node (shutdown.wait)" ||
		!strings.HasPrefix(rows[1], "service (shutdown.wait=1s has no effect on a reference: it is the node's (kernel.WithShutdownWait") {
		t.Errorf("shutdown.wait rows: %q", rows)
	}

	// the configuration's export of the service sets it: that is the node's
	cfg := writeConfig(t, "services:\n  - {interface: demo.Echo, params: {shutdown.timeout: 20s}}\n")
	code, out, errOut = airnode(t, bundled(t), "--config", cfg, "list", "--explain", url)
	if code != 0 {
		t.Fatalf("--explain --config: exit %d, stderr %s", code, errOut)
	}
	want[0] = "shutdown.timeout service 20s services[0].params (shutdown.timeout)"
	if rows := explainRows(t, out, "shutdown.timeout"); strings.Join(rows, "\n") != strings.Join(want, "\n") {
		t.Errorf("with services[0].params: shutdown.timeout rows:\n%s\nwant:\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
	}
}
