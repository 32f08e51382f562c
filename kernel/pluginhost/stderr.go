package pluginhost

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/airnode/airnode/sdk/pluginrpc"
)

// stderrBuffer is the size of the buffer a plugin's stderr is read with;
// a longer line is taken in pieces of this size, as go-plugin does
// (ClientConfig.PluginLogBufferSize).
const stderrBuffer = 64 << 10

// stderrPump reads a plugin process's stderr in place of go-plugin's
// reader (cmdRunner gives go-plugin a pipe that only ends with it), so
// that the plugin never waits on the host's logging: a raw line goes to
// the launch's startTail, which holds a bounded number of the lines
// written before the start's outcome and counts the rest, and bounds
// those after it (lineBound), with no encoding on the way; a record of the
// plugin's own logger (hclog JSON) goes to the startTail as well, held
// within the same bound, until the outcome is known, and after it to the
// hclog logger go-plugin would have used (slogWriter), as go-plugin's
// reader passes it. Lines are taken one at a time, in the order written.
// Before this, go-plugin formatted and the host re-parsed and logged each
// line as it came, and a plugin writing 300,000 lines before sdk.Serve
// (0.7 s alone) blocked on its stderr pipe for 8 s and failed its
// start_timeout of 3 s (tester88 #1); records of its sdk.Logger() were
// still logged each as it came until fix-bx.
type stderrPump struct {
	rec  hclog.Logger // go-plugin's logger, named after the binary (its "plugin.<file>")
	log  *slog.Logger // the plugin's host logger, for raw lines
	tail *startTail
	// handover is called for a record carrying pluginrpc.HandoverKey that
	// the tail holds (slogWriter calls it for the others)
	handover func()

	inPanic bool // a "panic: " or "fatal error: " line was seen: the rest are its stack
}

// run reads r until it ends, then closes w (go-plugin's stderr reader,
// which then sees its end) with the read's error, if not io.EOF.
func (s *stderrPump) run(r io.Reader, w *io.PipeWriter) {
	br := bufio.NewReaderSize(r, stderrBuffer)
	continuation := false // the previous piece was the start of a longer line
	for {
		line, isPrefix, err := br.ReadLine()
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			_ = w.CloseWithError(err)
			return
		}
		if isPrefix || continuation {
			s.raw(string(line), slog.LevelDebug) // a piece of a longer line
			continuation = isPrefix
			continue
		}
		s.line(line)
	}
}

// line takes one whole line: a record of the plugin's own logger is
// logged on rec, with its level and pairs; anything else is a raw line,
// at the level go-plugin gives it: the one a "[WARN]" style prefix
// names, error from a "panic: " or "fatal error: " line on, else debug
// (which the host shows at info).
func (s *stderrPump) line(line []byte) {
	if len(line) > 0 && line[0] == '{' && s.record(line) {
		return
	}
	text := string(line)
	level := slog.LevelDebug
	switch {
	case strings.HasPrefix(text, "[TRACE]"):
		level = slog.LevelDebug - 4
	case strings.HasPrefix(text, "[DEBUG]"):
	case strings.HasPrefix(text, "[INFO]"):
		level = slog.LevelInfo
	case strings.HasPrefix(text, "[WARN]"):
		level = slog.LevelWarn
	case strings.HasPrefix(text, "[ERROR]"):
		level = slog.LevelError
	case strings.HasPrefix(text, "panic: ") || strings.HasPrefix(text, "fatal error: "):
		s.inPanic = true
		level = slog.LevelError
	case s.inPanic:
		level = slog.LevelError
	}
	s.raw(text, level)
}

// raw hands a raw stderr line to the tail, at info at least.
func (s *stderrPump) raw(text string, level slog.Level) {
	s.tail.write(s.log, text, max(level, slog.LevelInfo))
}

// record takes line, when it is a record of hclog's JSON format (an
// "@level" go-plugin knows): held by the tail before the start's outcome
// (holdRecord), else logged on rec as go-plugin does: its message, its
// pairs, and its "timestamp". It returns false for other lines.
//
// Before the outcome, a line that reads as an ordinary record (quickLevel:
// trace, debug or info) is held without being decoded: most of a flood's
// records are only counted, and decoding each (tens of microseconds under
// the race detector) kept the plugin waiting on its stderr pipe. The tail
// decodes the ones it logs (parseRecord), and logs one that proves not to
// be a record as a raw line.
func (s *stderrPump) record(line []byte) bool {
	if level, ok := quickLevel(line); ok && s.tail.holdRecord(string(line), "", level) {
		return true
	}
	rec, msg, level, ts, ok := parseRecord(line)
	if !ok {
		return false
	}
	_, asked := rec[pluginrpc.HandoverKey]
	if s.tail.holdRecord(string(line), msg, hclogLevels[level.String()]) {
		if asked && s.handover != nil {
			s.handover()
		}
		return true
	}
	suppressed := 0
	if lv := hclogLevels[level.String()]; !asked && s.log.Enabled(context.Background(), lv) {
		// within the bound; a record the host does not show takes no
		// share of it, and a handover request is never left out
		var ok bool
		if suppressed, ok = s.tail.records.admit(s.log, lv, "log"); !ok {
			return true
		}
	}
	args := make([]any, 0, 2*len(rec)+4)
	for k, v := range rec {
		if k == "@message" || k == "@level" || k == "@timestamp" {
			continue
		}
		args = append(args, k, v)
	}
	args = append(args, "timestamp", ts.Format(hclog.TimeFormat))
	if suppressed > 0 {
		args = append(args, "suppressed", suppressed)
	}
	s.rec.Log(level, msg, args...)
	return true
}

// parseRecord decodes line when it is a record of hclog's JSON format,
// as go-plugin reads one: a JSON object whose "@level" is trace, debug,
// info, warn or error, and whose "@timestamp", if a string, is hclog's
// time. It returns the object, its "@message", its level and its time;
// ok is false for any other line (go-plugin logs it as it came, as a raw
// one).
func parseRecord(line []byte) (rec map[string]any, msg string, level hclog.Level, ts time.Time, ok bool) {
	if json.Unmarshal(line, &rec) != nil {
		return nil, "", hclog.NoLevel, ts, false
	}
	msg, _ = rec["@message"].(string)
	lv, _ := rec["@level"].(string)
	level = hclog.LevelFromString(lv)
	switch level {
	case hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error:
	default:
		return nil, "", hclog.NoLevel, ts, false
	}
	if v, isString := rec["@timestamp"].(string); isString {
		t, err := time.Parse("2006-01-02T15:04:05.000000Z07:00", v)
		if err != nil {
			return nil, "", hclog.NoLevel, ts, false
		}
		ts = t
	}
	return rec, msg, level, ts, true
}

// levelKey starts the "@level" pair of hclog's JSON records.
var levelKey = []byte(`"@level":"`)

// quickLevel reads, without decoding it, the level of line when it looks
// like an ordinary record of hclog's JSON format: an object ("{...}")
// with an "@level" of trace, debug or info, as hclog writes them, and no
// pluginrpc.HandoverKey. ok is false for anything else (a warning or an
// error, whose message the start error may quote, is decoded).
func quickLevel(line []byte) (slog.Level, bool) {
	if len(line) < 2 || line[0] != '{' || line[len(line)-1] != '}' {
		return 0, false
	}
	i := bytes.Index(line, levelKey)
	if i < 0 {
		return 0, false
	}
	rest := line[i+len(levelKey):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return 0, false
	}
	var level slog.Level
	switch string(rest[:j]) {
	case "trace":
		level = hclogLevels["trace"]
	case "debug":
		level = slog.LevelDebug
	case "info":
		level = slog.LevelInfo
	default:
		return 0, false
	}
	if bytes.Contains(line, handoverKey) {
		return 0, false
	}
	return level, true
}

// handoverKey is pluginrpc.HandoverKey as a JSON key.
var handoverKey = []byte(`"` + pluginrpc.HandoverKey + `"`)
