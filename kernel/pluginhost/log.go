package pluginhost

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
)

// hclog returns the logger go-plugin uses for this plugin: its own
// messages, and the plugin's log records and raw stderr lines, go to the
// host's slog logger as records of their own (slogWriter), with their
// key-value pairs as attributes.
func (p *proc) hclog(mute *atomic.Bool) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:        "plugin",
		Level:       hclog.Trace, // the host's handler decides what shows
		Output:      slogWriter{p.log, mute},
		JSONFormat:  true,
		DisableTime: true,
	})
}

// slogWriter re-logs hclog's JSON lines as slog records at the matching
// level: the message, then the pairs as attributes, sorted by key (a
// plugin's panic stack is one "stack" attribute, escaped once by the
// host's handler, not a message with hclog's "| " lines escaped again).
// go-plugin logs a raw line of the plugin's stderr (a runtime panic, a
// fatal error, a plain log.Print) at debug with no pairs on the logger
// named after the binary ("plugin.<name>"), where a record of the
// plugin's own logger carries its timestamp and go-plugin's own messages
// come from "plugin": those lines are shown at info, so that a plugin's
// plain stderr is not hidden at the default level.
type slogWriter struct {
	l    *slog.Logger
	mute *atomic.Bool // when set, go-plugin's "failed to exit gracefully" is dropped
}

// renamed are keys of go-plugin's records that would repeat the host
// logger's own (its "plugin" is the binary's path; ours, its name): a
// JSON handler keeps one of two equal keys.
var renamed = map[string]string{"plugin": "path"}

var hclogLevels = map[string]slog.Level{
	"trace": slog.LevelDebug - 4, "debug": slog.LevelDebug, "info": slog.LevelInfo,
	"warn": slog.LevelWarn, "error": slog.LevelError,
}

func (w slogWriter) Write(b []byte) (int, error) {
	var rec map[string]any
	if err := json.Unmarshal(b, &rec); err != nil {
		w.l.Info(strings.TrimSpace(string(b)))
		return len(b), nil
	}
	msg, _ := rec["@message"].(string)
	if w.mute.Load() && strings.Contains(msg, "plugin failed to exit gracefully") {
		return len(b), nil
	}
	lv, _ := rec["@level"].(string)
	level, ok := hclogLevels[lv]
	if !ok {
		level = slog.LevelInfo
	}
	var attrs []slog.Attr
	for _, k := range slices.Sorted(maps.Keys(rec)) {
		if strings.HasPrefix(k, "@") || k == "timestamp" {
			continue
		}
		name := k
		if r, ok := renamed[k]; ok {
			name = r
		}
		attrs = append(attrs, slog.Any(name, rec[k]))
	}
	module, _ := rec["@module"].(string)
	if _, own := rec["timestamp"]; !own && level == slog.LevelDebug && len(attrs) == 0 && strings.HasPrefix(module, "plugin.") {
		level = slog.LevelInfo // a raw stderr line
		attrs = append(attrs, slog.String("stream", "stderr"))
	}
	w.l.LogAttrs(context.Background(), level, msg, attrs...)
	return len(b), nil
}

// lineLogger logs each line written to it as an info record: the output
// of a plugin's os.Stdout and os.Stderr, which go-plugin streams to the
// host after the handshake (ClientConfig.SyncStdout, SyncStderr) and
// would otherwise discard.
type lineLogger struct {
	l      *slog.Logger
	stream string

	mu  sync.Mutex
	buf []byte // an unfinished line
}

// maxLine bounds an unfinished line kept between writes.
const maxLine = 64 << 10

func (w *lineLogger) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > maxLine {
		w.emit(w.buf)
		w.buf = nil
	}
	if len(w.buf) == 0 {
		w.buf = nil
	}
	return len(b), nil
}

func (w *lineLogger) emit(line []byte) {
	if s := strings.TrimRight(string(line), "\r"); s != "" {
		w.l.Info(s, "stream", w.stream)
	}
}
