package pluginhost

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"
)

// slogWriter: a go-plugin record becomes one slog record with its level,
// message and pairs; go-plugin's "plugin" (the binary's path) is renamed
// "path" so that a JSON log keeps the host's plugin=<name>; a raw stderr
// line (module plugin.<name>, debug, no pairs) shows at info.
func TestSlogWriterRecords(t *testing.T) {
	var buf bytes.Buffer
	w := slogWriter{l: slog.New(slog.NewJSONHandler(&buf, nil)).With("plugin", "chatty"), mute: new(atomic.Bool), module: "plugin.chatty"}
	lines := []string{
		`{"@level":"info","@message":"plugin process exited","@module":"plugin","plugin":"/tmp/bin/chatty","id":42}`,
		`{"@level":"debug","@message":"FATAL: config missing","@module":"plugin.chatty"}`,
		`{"@level":"debug","@message":"quiet detail","@module":"plugin.chatty","timestamp":"2026-11-30T00:00:00Z","k":1}`,
	}
	for _, l := range lines {
		if _, err := w.Write([]byte(l + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	var recs []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		recs = append(recs, m)
	}
	if len(recs) != 2 { // the debug record is below the handler's info level
		t.Fatalf("%d records: %v", len(recs), recs)
	}
	if r := recs[0]; r["plugin"] != "chatty" || r["path"] != "/tmp/bin/chatty" || r["id"] != float64(42) || r["level"] != "INFO" {
		t.Errorf("exit record %v; want plugin=chatty, path=/tmp/bin/chatty, id=42", r)
	}
	if r := recs[1]; r["msg"] != "FATAL: config missing" || r["level"] != "INFO" || r["stream"] != "stderr" {
		t.Errorf("raw stderr line %v; want it at INFO with stream=stderr", r)
	}
}
