package accesslog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/airnode/airnode/spi"
)

// Name is the extension name of this filter.
const Name = "accesslog"

// Key is the URL key that activates the filter and says where lines go.
const Key = "accesslog"

// KeyArgs is the URL key that adds the arguments to each line.
const KeyArgs = "accesslog.args"

// Order is the filter's activation order: inside metrics, outside token
// and the limits, so that refused calls are logged with their status.
const Order = -100

// MaxArgs bounds the logged text of the arguments, in bytes.
const MaxArgs = 1024

// Builder builds accesslog filters. The zero value is ready to use: its
// filters log "accesslog=true" lines to their node's logger
// (spi.LoggerUser), or to a text logger on stderr outside a node; Logger,
// when set before the first Build, replaces both. Close it to close the
// files it opened.
type Builder struct {
	// Logger receives the lines of "accesslog=true" and the reports of
	// file failures of every filter the Builder builds, whatever node
	// they serve; nil means each filter's node's logger.
	Logger *slog.Logger

	mu     sync.Mutex
	files  map[string]*sink
	closed bool
}

// sink is one access-log file.
type sink struct {
	once   sync.Once
	log    *slog.Logger // nil when the file could not be opened
	closer io.Closer
}

// Name returns "accesslog".
func (*Builder) Name() string { return Name }

// Activation switches the filter on for both sides when the URL has
// "accesslog".
func (*Builder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}, Key: Key, Order: Order}
}

// Build reads u's side, accesslog and accesslog.args. Errors: no or
// unknown "side", an empty accesslog, a malformed accesslog.args. Pure: a
// file is opened on first use.
func (b *Builder) Build(u spi.URL) (spi.Filter, error) {
	v, _ := u.Param(spi.KeySide)
	side := spi.Side(v)
	if side != spi.Consumer && side != spi.Provider {
		return nil, fmt.Errorf("accesslog: URL key %q is %q: want %q or %q", spi.KeySide, v, spi.Consumer, spi.Provider)
	}
	args, err := u.Bool(KeyArgs, false)
	if err != nil {
		return nil, fmt.Errorf("accesslog: %w", err)
	}
	dest, _ := u.Param(Key)
	f := &Filter{b: b, side: side, args: args, dest: dest}
	if u.Host() != "" { // a reference through a registry names no provider
		f.addr = u.Address()
	}
	switch dest {
	case "":
		return nil, fmt.Errorf("accesslog: URL key %q is empty: want true, false or a file path", Key)
	case "false":
		f.off = true
	case "true", "default":
		f.dest = ""
	}
	return f, nil
}

// defaultLogger is the logger of a filter used outside a node, whose
// Builder has no Logger.
var defaultLogger = slog.New(slog.NewTextHandler(os.Stderr, nil))

// fileLogger returns the logger of path, opening the file on first use;
// nil when it cannot be opened (reported once on log) or the Builder is
// closed. The file's lines are JSON when log's handler is log/slog's JSON
// handler (the node logs JSON: --log-format json), text otherwise; the
// first filter to open a path decides.
func (b *Builder) fileLogger(path string, log *slog.Logger) *slog.Logger {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	if b.files == nil {
		b.files = map[string]*sink{}
	}
	s := b.files[path]
	if s == nil {
		s = &sink{}
		b.files[path] = s
	}
	b.mu.Unlock()
	s.once.Do(func() {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			log.Error("accesslog: cannot open the access log; calls are not logged there", "path", path, "err", err)
			return
		}
		s.closer = f
		if _, ok := log.Handler().(*slog.JSONHandler); ok {
			s.log = slog.New(slog.NewJSONHandler(&lockedWriter{w: f}, nil))
		} else {
			s.log = slog.New(slog.NewTextHandler(&lockedWriter{w: f}, nil))
		}
	})
	return s.log
}

// lockedWriter serialises writes so that lines never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close closes every file the Builder opened; later lines to files are
// dropped. Idempotent.
func (b *Builder) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	var errs []error
	for _, s := range b.files {
		s.once.Do(func() {}) // never open after Close
		if s.closer != nil {
			errs = append(errs, s.closer.Close())
			s.closer = nil
		}
	}
	return errors.Join(errs...)
}

// Filter writes one line per call.
type Filter struct {
	b    *Builder
	side spi.Side
	args bool
	off  bool
	dest string       // file path; "" for the logger
	addr string       // the URL's address, logged on the consumer
	node *slog.Logger // the node's logger (UseLogger); nil outside a node
}

// UseLogger makes the filter log to l, its node's logger, unless its
// Builder has a Logger (spi.LoggerUser: the kernel calls it right after
// Build).
func (f *Filter) UseLogger(l *slog.Logger) { f.node = l }

// logger returns where the filter's lines go, the file's aside: the
// Builder's Logger, else the node's, else stderr in text.
func (f *Filter) logger() *slog.Logger {
	switch {
	case f.b.Logger != nil:
		return f.b.Logger
	case f.node != nil:
		return f.node
	}
	return defaultLogger
}

// Invoke runs the call and logs it, whatever its outcome. A failure that
// a cluster below the filter swallowed (spi.Result.Swallowed: failsafe)
// is logged with its status and swallowed=true, though the caller got no
// error.
func (f *Filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	if f.off {
		return next.Invoke(ctx, inv)
	}
	start := time.Now()
	res := next.Invoke(ctx, inv)
	f.write(ctx, inv, res, time.Since(start), false)
	return res
}

// Rejected logs a call its provider answered with err before the
// service's filter chain ran: a method the service lacks
// (SERVICE_NOT_FOUND), arguments that do not decode (BAD_REQUEST). The
// kernel calls it (an optional interface of provider filters), so that
// such a call has its line, with duration 0 and before_filters=true, as
// on the consumer (tester15 D). inv has no arguments (none were decoded).
func (f *Filter) Rejected(ctx context.Context, inv *spi.Invocation, err error) {
	if f.off || f.side != spi.Provider {
		return
	}
	f.write(ctx, inv, spi.Result{Err: err}, 0, true)
}

// write logs one call's line.
func (f *Filter) write(ctx context.Context, inv *spi.Invocation, res spi.Result, d time.Duration, before bool) {
	log := f.logger()
	if f.dest != "" {
		if log = f.b.fileLogger(f.dest, log); log == nil {
			return
		}
	}
	attrs := make([]slog.Attr, 0, 10)
	attrs = append(attrs, slog.String("side", string(f.side)))
	if f.side == spi.Provider {
		attrs = append(attrs, slog.String("remote", inv.Attachment(spi.AttachmentRemote)))
	} else if f.addr != "" {
		attrs = append(attrs, slog.String("provider", f.addr))
	}
	attrs = append(attrs,
		slog.String("service", inv.Service),
		slog.String("method", inv.Method),
		slog.String("status", status(res).String()),
		slog.Duration("duration", d))
	if res.Err == nil && res.Swallowed != nil {
		attrs = append(attrs, slog.Bool("swallowed", true))
	}
	if before {
		attrs = append(attrs, slog.Bool("before_filters", true))
	}
	if f.args && !before {
		s := fmt.Sprintf("%v", inv.Args)
		if len(s) > MaxArgs {
			s = s[:MaxArgs] + "..."
		}
		attrs = append(attrs, slog.String("args", s))
	}
	log.LogAttrs(ctx, slog.LevelInfo, "access", attrs...)
}

// status is the call's outcome: its error's, or, when a cluster below
// swallowed a failure, that failure's.
func status(res spi.Result) spi.Status {
	if res.Err == nil && res.Swallowed != nil {
		return spi.StatusOf(res.Swallowed)
	}
	return spi.StatusOf(res.Err)
}

var (
	_ spi.FilterBuilder = (*Builder)(nil)
	_ spi.Filter        = (*Filter)(nil)
	_ spi.LoggerUser    = (*Filter)(nil)
)
