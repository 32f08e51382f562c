package pluginhost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/airnode/airnode/internal/ratelog"
	"github.com/airnode/airnode/internal/suggest"
	"github.com/airnode/airnode/sdk/pluginrpc"
)

// slogWriter returns the writer of the logger go-plugin uses for one
// launch of this plugin (hclogFor), following the launch's tail.
func (p *proc) slogWriter(mute *atomic.Bool, tail *startTail) slogWriter {
	return slogWriter{p.log, mute, tail, "plugin." + filepath.Base(p.path), p.h.stackLevel, func() { p.requestHandover(tail) }}
}

// hclogFor returns the logger go-plugin uses for a plugin: its own
// messages, and the plugin's log records and raw stderr lines, go to the
// host's slog logger as records of their own (w), with their key-value
// pairs as attributes.
func hclogFor(w slogWriter) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:        "plugin",
		Level:       hclog.Trace, // the host's handler decides what shows
		Output:      w,
		JSONFormat:  true,
		DisableTime: true,
	})
}

// slogWriter re-logs hclog's JSON lines as slog records at the matching
// level: the message, then the pairs as attributes, sorted by key (a
// plugin's panic stack is one "stack" attribute, escaped once by the
// host's handler, not a message with hclog's "| " lines escaped again).
// go-plugin logs a raw line of the plugin's stderr (a plain log.Print)
// with no pairs on the logger named after the binary ("plugin.<file>"),
// at debug, or at error from a "panic: " or "fatal error: " line on (the
// rest of the stack too), where a record of the plugin's own logger
// carries its timestamp and go-plugin's own messages come from "plugin":
// those lines are shown at info at least, so that a plugin's plain stderr
// is not hidden at the default level. All of them go through tail (when
// not nil), one at a time and in the order the plugin wrote them: until
// the start's outcome is known it holds them, then logs them at info once
// the plugin runs and at warn at least when it failed to start (its last
// lines, or its panic, are then quoted in the start error as the reason).
// The process's own stderr reaches tail by stderrPump, not through here;
// a raw line still may (one go-plugin logs on the binary's logger).
type slogWriter struct {
	l    *slog.Logger
	mute *atomic.Bool // when set, go-plugin's "failed to exit gracefully" is dropped
	tail *startTail
	// module is the logger go-plugin logs the plugin's stderr lines on:
	// "plugin." and the binary's file name (its own messages are on
	// "plugin" and "plugin.stdio")
	module string
	// stackLevel, when not nil, is the level of a record's "stack"
	// attribute (a recovered panic's), logged as a record of its own
	// after the one it is taken from (WithPanicStackLevel)
	stackLevel *slog.Level
	// handover is called for a record of the plugin's own logger that
	// carries pluginrpc.HandoverKey: the plugin asks for a handover
	handover func()
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
	why := w.tail.hostStop()
	if why != "" && msg == "plugin failed to exit gracefully" {
		return len(b), nil // said by "plugin process exited" below, with the reason
	}
	if pid, ok := rec["pid"].(float64); ok && msg == "plugin started" && w.tail != nil {
		w.tail.pid.Store(int64(pid))
	}
	lv, _ := rec["@level"].(string)
	level, ok := hclogLevels[lv]
	if !ok {
		level = slog.LevelInfo
	}
	if why != "" && msg == "plugin process exited" {
		// The host stopped it: go-plugin's ERROR for a process it had to
		// kill ("signal: killed") is the host's own doing, said at warn
		// with why; an exit on request is info (tester71 #12), and so is
		// a kill the host chose outright (killedByHost, fix-dd).
		level = slog.LevelInfo
		if e, _ := rec["error"].(string); e != "" && !w.tail.killed.Load() {
			level = slog.LevelWarn
			why += fmt.Sprintf("; it did not exit within %v of the host's request to close, so the host killed it", gracefulExit)
		}
		rec["reason"] = why
	}
	attrs, stack := recordAttrs(rec, w.stackLevel)
	module, _ := rec["@module"].(string)
	_, own := rec["timestamp"]
	if !own && len(attrs) == 0 && module == w.module {
		// a raw stderr line: go-plugin logs it at debug, at error from a
		// "panic: " or "fatal error: " line on, or at the level a "[WARN]"
		// style prefix names
		level = max(level, slog.LevelInfo)
		if w.tail != nil {
			w.tail.write(w.l, msg, level)
			return len(b), nil
		}
		attrs = append(attrs, slog.String("stream", "stderr"))
	} else if own && w.tail != nil && level >= slog.LevelWarn {
		// a warning or error of the plugin's own logger: its ordinary
		// INFO and DEBUG records are not quoted as the reason it exited
		// (tester73 #6: last_stderr="[auth Build provider invoke]")
		w.tail.note(msg)
	}
	if _, asked := rec[pluginrpc.HandoverKey]; asked && own && w.handover != nil {
		defer w.handover() // after its record: the host's lines about it follow
	}
	logRecord(w.l, level, msg, attrs, stack, w.stackLevel)
	return len(b), nil
}

// recordAttrs returns the attributes of rec, a record of hclog's JSON
// format: its pairs sorted by key, but for its "@" keys and its
// "timestamp", with go-plugin's keys that would repeat the host logger's
// renamed; and, when stackLevel is not nil, its "stack" apart, not as an
// attribute (nil when it has none).
func recordAttrs(rec map[string]any, stackLevel *slog.Level) (attrs []slog.Attr, stack any) {
	for _, k := range slices.Sorted(maps.Keys(rec)) {
		if strings.HasPrefix(k, "@") || k == "timestamp" {
			continue
		}
		if k == "stack" && stackLevel != nil {
			stack = rec[k]
			continue
		}
		name := k
		if r, ok := renamed[k]; ok {
			name = r
		}
		attrs = append(attrs, slog.Any(name, rec[k]))
	}
	return attrs, stack
}

// logRecord logs a record of a plugin's logger on l: msg at level with
// attrs, then, when stack is not nil, its panic's stack as a record of its
// own at *stackLevel.
func logRecord(l *slog.Logger, level slog.Level, msg string, attrs []slog.Attr, stack any, stackLevel *slog.Level) {
	l.LogAttrs(context.Background(), level, msg, attrs...)
	if stack != nil {
		l.Log(context.Background(), *stackLevel, "stack of the panic in plugin code", "stack", stack)
	}
}

// tailLines is how many of a plugin's last stderr lines a start error
// quotes. Of the lines written before the start's outcome (raw lines and
// records of the plugin's own logger alike), the first earlyHead and the
// last earlyTail are held and logged once it is known (with a line saying
// how many were left out between them), and a panic's lines (error) up to
// earlyErrors more: a plugin writing 300,000 lines or records while it
// starts neither waits on the host's log nor fills it.
const (
	tailLines   = 3
	earlyHead   = 100
	earlyTail   = 100
	earlyErrors = 1000
)

// startTail follows one launch of a plugin: the last stderr lines (raw,
// or the messages of the plugin's own warnings and errors) and the first Go
// panic among them, for the start error, and the raw lines and records
// of the plugin's own logger written before the start's outcome is known
// (a bounded number of them), logged by settle at the level the outcome
// calls for. It logs every raw line under its lock, so that they reach the
// host's log in the order the plugin wrote them; the stderrPump hands it
// the records until then in the same order (hold), and logs them itself
// after.
type startTail struct {
	mu   sync.Mutex
	last []string // at most tailLines

	// stackLevel is the host's WithPanicStackLevel (nil when not set): a
	// held record's "stack" is then logged apart at it, as slogWriter does
	stackLevel *slog.Level

	// the lines written before the start's outcome: the first earlyHead
	// (head); then the error lines (a panic's stack) that left the last
	// earlyTail (ring, from ringAt on), up to earlyErrors (errors);
	// dropped counts the others
	head, errors, ring []heldLine
	ringAt             int
	dropped            int
	settled            bool

	// cookie: the plugin printed go-plugin's notAPluginLine, which its
	// Serve prints when the magic cookie the host sets is not the one it
	// was built with
	cookie bool

	// the first "panic: " or "fatal error: " line, and where: the first
	// frame of the stack that follows it outside package runtime
	panicLine, panicFunc, panicAt string
	frame                         int // 1: the next line is a function, 2: its file

	bound   lineBound // of the stderr lines after the start's outcome
	records lineBound // of the plugin's own log records after it (noun "records")

	// stopBy says why the host stops the process, set just before it
	// stops it ("" until then): slogWriter then logs go-plugin's "plugin
	// process exited" at info, or at warn when the host had to kill it,
	// with it as the reason, not as a failure
	stopBy atomic.Pointer[string]
	// killed is set with stopBy when the host kills the process outright
	// (killedByHost: its gRPC connection broken while it ran), not by a
	// request to close that it did not obey in time: go-plugin's
	// "signal: killed" is then the host's choice, logged at info
	killed atomic.Bool
	// inflight counts the host's gRPC calls to the process now (launch's
	// interceptor): a handover closes the old process once it is 0
	inflight atomic.Int64
	// handoverAsked: the process asked for a handover (requestHandover
	// acts on the first request only)
	handoverAsked atomic.Bool

	// pid is the process's id once go-plugin has started it (its "plugin
	// started" record), 0 before: launch kills its group when the start
	// is cut short (go-plugin's Client holds its lock for the whole
	// handshake, so its Kill cannot)
	pid atomic.Int64
}

// gracefulExit is how long go-plugin's Kill waits for a plugin to exit on
// its request before it kills it.
const gracefulExit = 2 * time.Second

// stoppedByHost records, before the host stops the process, why it does
// (the host is closing). Safe on a nil t.
func (t *startTail) stoppedByHost(why string) {
	if t != nil {
		t.stopBy.Store(&why)
	}
}

// killedByHost records, before the host kills the process outright
// (SIGKILL, no request to close first), why it does: go-plugin's
// "plugin process exited" with error "signal: killed" is then logged at
// info with why as the reason, where a process killed by another, or
// dead on its own, stays an error. Safe on a nil t.
func (t *startTail) killedByHost(why string) {
	if t != nil {
		t.killed.Store(true) // before stopBy, which slogWriter reads first
		t.stopBy.Store(&why)
	}
}

// hostStop returns why the host stopped the process, "" when it did not.
// Safe on a nil t.
func (t *startTail) hostStop() string {
	if t == nil {
		return ""
	}
	if w := t.stopBy.Load(); w != nil {
		return *w
	}
	return ""
}

// heldLine is a line of a plugin's stderr held until the start's
// outcome: a raw line, or a record of the plugin's own logger (record:
// line is its JSON, decoded when it is logged).
type heldLine struct {
	line   string
	level  slog.Level
	record bool
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
	t.notePanicLocked(line)
	if !t.cookie && strings.HasPrefix(line, notAPluginLine) {
		t.cookie = true
	}
	if len(t.last) == tailLines {
		t.last = t.last[1:]
	}
	t.last = append(t.last, line)
}

// notePanicLocked follows a Go runtime panic in the raw lines: its first
// line, then the goroutine header, then frames as function and file
// lines ("main.main()", "/src/main.go:12 +0x1d"), of which it keeps the
// first not in package runtime (runtime.gopanic, runtime.mapassign...).
func (t *startTail) notePanicLocked(line string) {
	switch {
	case t.panicLine == "":
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") {
			t.panicLine = line
		}
	case t.panicAt != "":
	case t.frame == 0:
		if strings.HasPrefix(line, "goroutine ") && strings.HasSuffix(line, ":") {
			t.frame = 1
		}
	case t.frame == 1:
		t.panicFunc, t.frame = line, 2
	default: // the frame's file line
		t.frame = 1
		if fn := t.panicFunc; !strings.HasPrefix(fn, "runtime.") && !strings.HasPrefix(fn, "panic(") {
			if i := strings.LastIndexByte(fn, '('); i > 0 {
				fn = fn[:i]
			}
			at, _, _ := strings.Cut(line, " +0x")
			t.panicFunc, t.panicAt = fn, at
		}
	}
}

// notAPluginLine is the first line go-plugin's Serve prints, before it
// exits with status 1, when the magic cookie in its environment is not
// the one of its handshake: the binary was built against another
// handshake than airnode's sdk (or run by hand).
const notAPluginLine = "This binary is a plugin. These are not meant to be executed directly."

// otherCookie reports whether the plugin printed notAPluginLine.
func (t *startTail) otherCookie() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cookie
}

// panicked describes the panic the plugin's stderr showed: `"panic:
// boom" in main.main at /src/main.go:12`, or "" when it showed none.
func (t *startTail) panicked() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.panicLine == "" {
		return ""
	}
	s := fmt.Sprintf("%q", t.panicLine)
	if t.panicAt != "" {
		s += fmt.Sprintf(" in %s at %s", t.panicFunc, t.panicAt)
	}
	return s
}

// write takes a raw stderr line at level: logged to l within the
// stream's bound once the start's outcome is known, else held (the first
// earlyHead and last earlyTail lines, and a panic's lines) or counted as
// left out. It never waits on l before the outcome.
func (t *startTail) write(l *slog.Logger, line string, level slog.Level) {
	if strings.TrimSpace(line) == "" {
		return // a blank line (one in a panic's stack) is no record
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.noteLocked(line)
	if t.settled {
		t.bound.log(l, level, line, "stderr")
		return
	}
	t.holdLocked(heldLine{line: line, level: level})
}

// holdRecord takes line, a record of the plugin's own logger (hclog's
// JSON format) at level, written before the start's outcome: held or
// counted as left out as a raw line is (write), its message msg noted for
// the start error when it is a warning or an error (the caller decoded
// it: quickLevel takes none above info). It returns false, holding
// nothing, once the outcome is known: the caller then logs it.
func (t *startTail) holdRecord(line, msg string, level slog.Level) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.settled {
		return false
	}
	if level >= slog.LevelWarn {
		// its ordinary INFO and DEBUG records are not quoted as the
		// reason it exited (tester73 #6), as slogWriter notes them
		t.noteLocked(msg)
	}
	t.holdLocked(heldLine{line: line, level: level, record: true})
	return true
}

// holdLocked holds h, a line written before the start's outcome: among
// the first earlyHead, or the last earlyTail; one that leaves those is
// kept when an error (a panic's), up to earlyErrors, else counted as left
// out. t.mu is held.
func (t *startTail) holdLocked(h heldLine) {
	switch {
	case len(t.head) < earlyHead:
		t.head = append(t.head, h)
	case len(t.ring) < earlyTail:
		t.ring = append(t.ring, h)
	default:
		old := t.ring[t.ringAt]
		t.ring[t.ringAt] = h
		t.ringAt = (t.ringAt + 1) % earlyTail
		if old.level >= slog.LevelError && len(t.errors) < earlyErrors {
			t.errors = append(t.errors, old)
		} else {
			t.dropped++
		}
	}
}

// settle logs the held lines to l in the order written, at warn at
// least when the start failed, else at their level (info for plain
// lines), a record with its pairs as slogWriter logs it, with one line
// saying how many were left out, and lets further lines through (the
// lines logged count in the stream's bound). Idempotent.
func (t *startTail) settle(l *slog.Logger, failed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.settled {
		return
	}
	t.settled = true
	ctx := context.Background()
	n := 0
	emit := func(hs []heldLine) {
		for _, h := range hs {
			level := h.level
			if failed {
				level = max(level, slog.LevelWarn)
			}
			n++
			if h.record {
				if rec, msg, _, _, ok := parseRecord([]byte(h.line)); ok {
					attrs, stack := recordAttrs(rec, t.stackLevel)
					logRecord(l, level, msg, attrs, stack, t.stackLevel)
					continue
				}
				level = max(level, slog.LevelInfo) // not a record after all (quickLevel): a raw line
			}
			l.Log(ctx, level, h.line, "stream", "stderr")
		}
	}
	emit(t.head)
	if t.dropped > 0 {
		l.Warn("plugin output lines left out before the handshake: more than the bound", "stream", "stderr", "suppressed", t.dropped,
			"bound", fmt.Sprintf("the first %d and the last %d lines (raw lines and the plugin's log records) written before the start's outcome, and a panic's", earlyHead, earlyTail))
	}
	emit(t.errors)
	emit(t.ring[t.ringAt:])
	emit(t.ring[:t.ringAt])
	t.head, t.errors, t.ring = nil, nil, nil
	t.bound.counted(n)
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

	bound lineBound
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

// emit logs line within the stream's bound. w.mu is held.
func (w *lineLogger) emit(line []byte) {
	if s := strings.TrimRight(string(line), "\r"); s != "" {
		w.bound.log(w.l, slog.LevelInfo, s, w.stream)
	}
}

// streamBurst is how many lines of one output stream of a plugin are
// logged per ratelog.Every (lineBound).
const streamBurst = 1000

// lineBound bounds the lines of one output stream of a plugin process
// (its stderr, its stdout) that reach the host's log: at most streamBurst
// per ratelog.Every (10 s). The lines past it are left out and counted;
// the first line logged after them carries how many were (suppressed=N),
// or a summary says it at the window's end if no line came (a plugin
// writing 100,000 lines in 1.5 s put 100,000 records in the host's log:
// tester66 F11). A Go panic's stack, logged at error, is never left out.
// The zero value is ready; safe for concurrent use.
type lineBound struct {
	// noun names what is bounded in the summary: "" for lines of an
	// output stream, "records" for the plugin's own log records
	noun string

	mu         sync.Mutex
	window     time.Time   // start of the current window
	n          int         // lines logged in it
	suppressed int         // lines left out since the last one logged
	summary    *time.Timer // the pending summary; nil when none
}

// counted starts a window with n lines logged in it: the lines held
// until a plugin's start's outcome, logged then.
func (b *lineBound) counted(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.window, b.n = time.Now(), n
}

// log logs line at level on l with "stream", stream, within the bound.
func (b *lineBound) log(l *slog.Logger, level slog.Level, line, stream string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	suppressed, ok := b.admitLocked(l, level, stream)
	switch {
	case !ok:
	case suppressed > 0:
		l.Log(context.Background(), level, line, "stream", stream, "suppressed", suppressed)
	default:
		l.Log(context.Background(), level, line, "stream", stream)
	}
}

// admit counts one line or record at level against the bound: ok when it
// is to be logged, with how many were left out since the last one logged
// (suppressed; the caller's record says it), false when it is left out
// (counted; a summary on l says how many at the window's end unless a
// record logged before says it). An error (a panic's stack) is never left
// out. The caller logs outside the bound's lock.
func (b *lineBound) admit(l *slog.Logger, level slog.Level, stream string) (suppressed int, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.admitLocked(l, level, stream)
}

func (b *lineBound) admitLocked(l *slog.Logger, level slog.Level, stream string) (suppressed int, ok bool) {
	now := time.Now()
	if now.Sub(b.window) >= ratelog.Every {
		b.window, b.n = now, 0
	}
	if b.n >= streamBurst && level < slog.LevelError {
		b.suppressed++
		if b.summary == nil {
			b.summary = time.AfterFunc(b.window.Add(ratelog.Every).Sub(now), func() { b.summarize(l, stream) })
		}
		return 0, false
	}
	b.n++
	suppressed, b.suppressed = b.suppressed, 0
	return suppressed, true
}

// summarize logs how many lines were left out, unless a line logged
// since said it. It runs on the summary's timer, at the window's end.
func (b *lineBound) summarize(l *slog.Logger, stream string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.summary = nil
	if b.suppressed == 0 {
		return
	}
	if b.noun == "records" {
		l.Warn("plugin log records left out: more than the bound", "stream", stream, "suppressed", b.suppressed,
			"bound", fmt.Sprintf("%d records below error per %v", streamBurst, ratelog.Every))
	} else {
		l.Warn("plugin output lines left out: more than the bound", "stream", stream, "suppressed", b.suppressed,
			"bound", fmt.Sprintf("%d lines per %v", streamBurst, ratelog.Every))
	}
	b.suppressed = 0
}

// pluginLogLevels are the values of AIRNODE_PLUGIN_LOG a plugin's sdk
// reads (hclog's levels); off silences it.
var pluginLogLevels = []string{"trace", "debug", "info", "warn", "error", "off"}

// badLogLevel returns the warning's attributes when v, a value of
// AIRNODE_PLUGIN_LOG from (where it was set), is not a level the sdk
// reads (the plugin then logs at info, as without it); nil when it is
// one, or empty.
func badLogLevel(v, from string) []any {
	if strings.TrimSpace(v) == "" || hclog.LevelFromString(v) != hclog.NoLevel {
		return nil
	}
	args := []any{"value", v, "from", from, "allowed", strings.Join(pluginLogLevels, ", ")}
	if c := suggest.Closest(strings.ToLower(strings.TrimSpace(v)), pluginLogLevels); c != "" {
		args = append(args, "hint", "did you mean "+c+"?")
	}
	return args
}

// badLogLevelMsg is the warning about a value of AIRNODE_PLUGIN_LOG that
// is not a level.
const badLogLevelMsg = "AIRNODE_PLUGIN_LOG is not a log level; the plugin ignores it and logs at info"

// warnLogLevel warns, once per Host, when the AIRNODE_PLUGIN_LOG of the
// host's environment is not a level (every plugin without its own env
// value inherits it), and for each plugin whose env in plugins.yaml sets
// one that is not. Start and CheckPoints call it with the plugins they
// launch.
func (h *Host) warnLogLevel(started []*proc) {
	if len(started) == 0 {
		return
	}
	inherited := false
	for _, p := range started {
		if v, set := p.spec.Env[pluginrpc.EnvLogLevel]; set {
			if args := badLogLevel(v, "its env in "+h.configFile); args != nil {
				p.log.Warn(badLogLevelMsg, args...)
			}
		} else {
			inherited = true
		}
	}
	if v, set := os.LookupEnv(pluginrpc.EnvLogLevel); set && inherited {
		if args := badLogLevel(v, "the environment"); args != nil {
			h.envLevelOnce.Do(func() { h.log.Warn(badLogLevelMsg, args...) })
		}
	}
}
