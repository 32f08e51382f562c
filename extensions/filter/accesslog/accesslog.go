package accesslog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/airnode/airnode/internal/tlsconf"
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

// KeyAttachments is the URL key listing the attachments whose values each
// line prints (comma-separated keys: "trace,tenant").
const KeyAttachments = "accesslog.attachments"

// MaxArgs bounds the logged text of the arguments, in bytes.
const MaxArgs = 1024

// MaxAttachment bounds the logged text of one attachment's value, in bytes.
const MaxAttachment = 256

// RenameCheck is how often, at most, a file access log checks that its
// path still names the file it writes (os.SameFile on a stat of the
// path): a log that was renamed or removed (logrotate without copytruncate
// or a postrotate signal; mv by hand) is reopened at the next line after
// at most this long. Reopen does it at once (serve calls it on SIGHUP).
const RenameCheck = time.Second

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

// sink is one access-log file: the logger writing to it, and the file,
// reopened by Reopen and when its path names another file (RenameCheck).
type sink struct {
	once   sync.Once
	path   string
	report *slog.Logger // where open failures are reported: the first filter's logger
	log    *slog.Logger // nil when the file could not be opened

	mu      sync.Mutex // serialises lines, reopening and Close
	f       *os.File   // nil once closed
	checked time.Time  // last RenameCheck
	failing bool       // the last reopen failed (reported once until one works)
}

// Name returns "accesslog".
func (*Builder) Name() string { return Name }

// Activation switches the filter on for both sides when the URL has
// "accesslog".
func (*Builder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}, Key: Key, Order: Order}
}

// Build reads u's side, accesslog, accesslog.args and
// accesslog.attachments. Errors: no or unknown "side", an empty
// accesslog, a malformed accesslog.args, an attachment key that is not
// [A-Za-z0-9_.-]+ or is a secret (token). Pure: a file is opened on
// first use.
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
	atts, err := attachmentKeys(u)
	if err != nil {
		return nil, err
	}
	dest, _ := u.Param(Key)
	f := &Filter{b: b, side: side, args: args, dest: dest, atts: atts}
	if b.Logger != nil {
		f.own = b.Logger.With("component", Name) // once, here, not per call's line
	}
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

// attachmentKey is what accesslog.attachments takes as one key.
var attachmentKey = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// attachmentKeys reads accesslog.attachments: comma-separated attachment
// keys, blanks around them and empty items ignored, duplicates dropped.
func attachmentKeys(u spi.URL) ([]string, error) {
	v, _ := u.Param(KeyAttachments)
	var keys []string
	for _, k := range strings.Split(v, ",") {
		k = strings.TrimSpace(k)
		switch {
		case k == "":
			continue
		case !attachmentKey.MatchString(k):
			return nil, fmt.Errorf("accesslog: URL key %q is %q: attachment key %q: want comma-separated keys of letters, digits, '_', '.' or '-' (trace,tenant)", KeyAttachments, v, k)
		case spi.IsSecretKey(k):
			return nil, fmt.Errorf("accesslog: URL key %q is %q: attachment %q is a secret and is never logged", KeyAttachments, v, k)
		}
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// defaultLogger is the logger of a filter used outside a node, whose
// Builder has no Logger.
var defaultLogger = slog.New(slog.NewTextHandler(os.Stderr, nil)).With("component", Name)

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
		s = &sink{path: path}
		b.files[path] = s
	}
	b.mu.Unlock()
	s.once.Do(func() {
		f, err := openLog(path)
		if err != nil {
			log.Error("cannot open the access log; calls are not logged there", "path", path, "err", err)
			return
		}
		s.mu.Lock()
		s.f, s.report, s.checked = f, log, time.Now()
		s.mu.Unlock()
		if _, ok := log.Handler().(*slog.JSONHandler); ok {
			s.log = slog.New(slog.NewJSONHandler(s, nil))
		} else {
			s.log = slog.New(slog.NewTextHandler(s, nil))
		}
	})
	return s.log
}

// openLog opens path for appending, creating it 0644.
func openLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
}

// CheckFile reports whether path can be opened as an access log (opened
// for appending, created 0644 when missing, then closed), as the first
// call would open it: serve checks every service's accesslog path before
// it exports, instead of failing at the first call. The error names the
// path and says what the key takes.
func CheckFile(path string) error {
	f, err := openLog(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named once
		}
		return fmt.Errorf("accesslog: URL key %q: cannot open the access log %s: %w (want true, false or the path of a file that can be created or appended to)", Key, path, err)
	}
	return f.Close()
}

// Check reports whether u's access log, when it is a file (accesslog=PATH),
// can be opened: CheckFile. Nil when u logs to the node's logger, is off,
// or has no accesslog key.
func Check(u spi.URL) error {
	switch v, _ := u.Param(Key); v {
	case "", "true", "default", "false":
		return nil
	default:
		return CheckFile(v)
	}
}

// Write writes one line (slog's handlers write a record per call), so
// that lines never interleave; first, at most once per RenameCheck, it
// reopens the file when the path names another file or none. A line
// after Close is dropped.
func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return len(p), nil
	}
	if now := time.Now(); now.Sub(s.checked) >= RenameCheck {
		s.checked = now
		if s.moved() {
			s.reopen()
		}
	}
	return s.f.Write(p)
}

// moved reports whether s's path no longer names the file s writes: it
// was renamed or removed (and maybe created anew). Called with s.mu held.
func (s *sink) moved() bool {
	at, err := os.Stat(s.path)
	if err != nil {
		return true
	}
	cur, err := s.f.Stat()
	return err != nil || !os.SameFile(at, cur)
}

// reopen opens s's path anew and writes there from now on, closing the
// file it wrote; when the path cannot be opened it keeps writing the old
// file (lines are not lost) and reports it once, until an open works.
// Called with s.mu held and s.f open.
func (s *sink) reopen() error {
	f, err := openLog(s.path)
	if err != nil {
		if !s.failing && s.report != nil {
			s.report.Error("cannot reopen the access log; lines go on to the file it had open", "path", s.path, "err", err)
		}
		s.failing = true
		return fmt.Errorf("accesslog: reopen %s: %w", s.path, err)
	}
	old := s.f
	s.f, s.failing = f, false
	return old.Close()
}

// Reopen reopens every access-log file the Builder has open, at its path,
// as nginx does on USR1 and logrotate's postrotate expects (serve calls it
// on SIGHUP): after "mv access.log access.log.1", the next lines go to a
// new access.log. It returns how many files it reopened; the error joins
// those it could not reopen (each keeps writing its old file, and is
// reported once on the node's logger). Safe to call concurrently with
// calls; after Close it does nothing.
func (b *Builder) Reopen() (int, error) {
	b.mu.Lock()
	sinks := make([]*sink, 0, len(b.files))
	for _, s := range b.files {
		sinks = append(sinks, s)
	}
	b.mu.Unlock()
	n := 0
	var errs []error
	for _, s := range sinks {
		s.mu.Lock()
		if s.f != nil {
			if err := s.reopen(); err != nil {
				errs = append(errs, err)
			} else {
				n++
			}
			s.checked = time.Now()
		}
		s.mu.Unlock()
	}
	return n, errors.Join(errs...)
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
		s.mu.Lock()
		if s.f != nil {
			errs = append(errs, s.f.Close())
			s.f = nil
		}
		s.mu.Unlock()
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
	addr string       // the URL's address, logged on the consumer when the Result names none
	atts []string     // accesslog.attachments
	node *slog.Logger // the node's logger (UseLogger); nil outside a node
	own  *slog.Logger // the Builder's Logger with component=accesslog, built once at Build; nil without one
}

// UseLogger makes the filter log to l, its node's logger, unless its
// Builder has a Logger (spi.LoggerUser: the kernel calls it right after
// Build).
func (f *Filter) UseLogger(l *slog.Logger) {
	if l != nil {
		l = l.With("component", Name) // once, here: the handler formats it ahead of every call's line
	}
	f.node = l
}

// logger returns where the filter's lines go, the file's aside: the
// Builder's Logger, else the node's, else stderr in text; each with
// component=accesslog.
func (f *Filter) logger() *slog.Logger {
	switch {
	case f.own != nil:
		return f.own
	case f.node != nil:
		return f.node
	}
	return defaultLogger
}

// Invoke runs the call and logs it, whatever its outcome. A failure that
// a cluster below the filter swallowed (spi.Result.Swallowed: failsafe)
// is logged with its status and swallowed=true, though the caller got no
// error. On the provider, a success whose result was ready after the
// consumer's deadline (spi.Invocation.Due: the exchange does not send it,
// the consumer gets SERVER_TIMEOUT) is logged status=SERVER_TIMEOUT
// late=true, as the metrics filter counts it.
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
// on the consumer. inv has no arguments (none were decoded).
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
	attrs := make([]slog.Attr, 0, 14)
	attrs = append(attrs, slog.String("side", string(f.side)))
	if f.side == spi.Provider {
		attrs = append(attrs, slog.String("consumer", inv.Attachment(spi.AttachmentRemote)))
		if inv.ConsumerApplication != "" {
			attrs = append(attrs, slog.String("consumer_application", inv.ConsumerApplication))
		}
		if cert := spi.PeerCertificate(ctx); cert != nil {
			attrs = append(attrs, slog.String("client_cert", tlsconf.Identity(cert)))
		}
	} else if res.ProviderAddr != "" {
		attrs = append(attrs, slog.String("provider", res.ProviderAddr))
	} else if f.addr != "" {
		attrs = append(attrs, slog.String("provider", f.addr))
	}
	st := status(res)
	late := false
	if inv.Due != 0 && st == spi.StatusOK {
		end := res.Ended // the local invoker's reading; a plugin's or InvokerFunc's result has none
		if end == 0 {
			end = spi.Mono()
		}
		late = end >= inv.Due
	}
	if late {
		st = spi.StatusServerTimeout // what the exchange answers instead (spi.Invocation.Due)
	}
	attrs = append(attrs,
		slog.String("service", inv.Service),
		slog.String("method", inv.Method),
		slog.String("status", st.String()),
		// the same text in both formats ("1.5ms"), and a number for machines
		slog.String("duration", d.String()),
		slog.Float64("duration_ms", math.Round(float64(d)/1e3)/1e3))
	if len(f.atts) > 0 {
		var g []any
		for _, k := range f.atts {
			if v, ok := inv.Attachments[k]; ok {
				if len(v) > MaxAttachment {
					v = v[:MaxAttachment] + "..."
				}
				g = append(g, slog.String(k, v))
			}
		}
		if len(g) > 0 {
			attrs = append(attrs, slog.Group("attachments", g...))
		}
	}
	if res.Err == nil && res.Swallowed != nil {
		attrs = append(attrs, slog.Bool("swallowed", true))
	}
	if late {
		attrs = append(attrs, slog.Bool("late", true))
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
	// Last, after the fields older readers parse: the exchange, which
	// pairs this line with the other side's (request_id and the
	// consumer's address: its "local", the provider's "consumer").
	id, local := res.RequestID, res.Local
	if f.side == spi.Provider {
		id, local = inv.RequestID, inv.Local
	}
	if id != 0 {
		attrs = append(attrs, slog.Uint64("request_id", id))
	}
	if local != "" {
		attrs = append(attrs, slog.String("local", local))
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
