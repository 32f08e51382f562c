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
func (p *proc) hclog(mute *atomic.Bool, tail *startTail) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:        "plugin",
		Level:       hclog.Trace, // the host's handler decides what shows
		Output:      slogWriter{p.log, mute, tail},
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
// plain stderr is not hidden at the default level. Until the start's
// outcome is known, raw lines are held in tail (when not nil), which logs
// them at info once the plugin runs and at warn when it failed to start
// (its last lines are then quoted in the start error as the reason).
type slogWriter struct {
	l    *slog.Logger
	mute *atomic.Bool // when set, go-plugin's "failed to exit gracefully" is dropped
	tail *startTail
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
	if msg == "plugin process exited" && w.tail != nil && w.tail.starting() {
		return len(b), nil // a failed start: its error says how the process ended
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
	_, own := rec["timestamp"]
	if !own && level == slog.LevelDebug && len(attrs) == 0 && strings.HasPrefix(module, "plugin.") {
		// a raw stderr line
		if w.tail != nil && w.tail.hold(msg) {
			return len(b), nil
		}
		level = slog.LevelInfo
		attrs = append(attrs, slog.String("stream", "stderr"))
	} else if own && w.tail != nil {
		w.tail.note(msg) // a record of the plugin's own logger
	}
	w.l.LogAttrs(context.Background(), level, msg, attrs...)
	return len(b), nil
}

// tailLines is how many of a plugin's last stderr lines a start error
// quotes; maxHeld bounds the raw lines held before the start's outcome
// (further ones are logged at once).
const (
	tailLines = 3
	maxHeld   = 200
)

// startTail follows one launch of a plugin: the last stderr lines (raw,
// or the messages of the plugin's own log records), for the start error,
// and the raw lines written before the start's outcome is known, logged
// by settle at the level the outcome calls for.
type startTail struct {
	mu      sync.Mutex
	last    []string // at most tailLines
	held    []string
	settled bool
}

// note records line as the latest stderr line.
func (t *startTail) note(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.noteLocked(line)
}

func (t *startTail) noteLocked(line string) {
	if line = strings.TrimSpace(line); line == "" {
		return
	}
	if len(t.last) == tailLines {
		t.last = t.last[1:]
	}
	t.last = append(t.last, line)
}

// hold records a raw stderr line and keeps it for settle; false: log it
// now (settled, or too many held).
func (t *startTail) hold(line string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.noteLocked(line)
	if t.settled || len(t.held) >= maxHeld {
		return false
	}
	t.held = append(t.held, line)
	return true
}

// settle logs the held lines to l, at warn when the start failed, else at
// info, and lets further lines through. Idempotent.
func (t *startTail) settle(l *slog.Logger, failed bool) {
	t.mu.Lock()
	held := t.held
	t.held, t.settled = nil, true
	t.mu.Unlock()
	level := slog.LevelInfo
	if failed {
		level = slog.LevelWarn
	}
	for _, line := range held {
		l.Log(context.Background(), level, line, "stream", "stderr")
	}
}

// starting reports whether the start's outcome is still unknown.
func (t *startTail) starting() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.settled
}

// lines returns the last stderr lines, oldest first.
func (t *startTail) lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.last)
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
