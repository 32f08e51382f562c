package pluginrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
	"github.com/airnode/airnode/spi"
)

// Error kinds on the wire (pb.Error.Kind) for sentinels the host maps back.
const (
	kindNotSupported = "not_supported"
	kindCanceled     = "canceled"
	kindDeadline     = "deadline_exceeded"
	// kindPanic marks the SERVER_ERROR of a panic recovered in plugin
	// code (recovered), so the host can name the plugin in it; an older
	// host reads the status and message alone.
	kindPanic = "panic"
	// kindNotCandidate marks the CLIENT_ERROR of a balancer whose Select
	// returned an invoker that was not one of its candidates, so the host
	// can say it with the plugin's declared name (the plugin knows only
	// its own Name()); an older host shows the plugin's message.
	kindNotCandidate = "not_candidate"
	// kindShortCircuit marks the SERIALIZATION_ERROR of a filter whose
	// short-circuit value cannot be encoded, for the same reason.
	kindShortCircuit = "short_circuit_value"
)

// causes are the sentinels pb.Error.Causes carries across the boundary:
// the ones the kernel classifies a failure by (the metrics filter's
// rejected calls, the failover cluster's retries, a registry's
// unsupported operation, a context's end), by their wire names.
var causes = []struct {
	name string
	err  error
}{
	{"access_denied", spi.ErrAccessDenied},
	{"request_sent", spi.ErrRequestSent},
	{"not_connected", spi.ErrNotConnected},
	{"go_away", spi.ErrGoAway},
	{"not_supported", spi.ErrNotSupported},
	{"canceled", context.Canceled},
	{"deadline_exceeded", context.DeadlineExceeded},
}

// causeNames returns the wire names of the sentinels in err's chain.
func causeNames(err error) []string {
	var out []string
	for _, c := range causes {
		if errors.Is(err, c.err) {
			out = append(out, c.name)
		}
	}
	return out
}

// causeOf returns the Cause that names (pb.Error.Causes) stand for: the
// one sentinel, several joined, nil for none; names this host does not
// know (a newer plugin's) are left out.
func causeOf(names []string) error {
	var errs []error
	for _, n := range names {
		for _, c := range causes {
			if c.name == n && !slices.Contains(errs, c.err) {
				errs = append(errs, c.err)
			}
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errors.Join(errs...)
}

// toPB encodes err for the wire: an *spi.Error keeps its status and
// message, and an error wrapping one (fmt.Errorf("auth: %w", e)) has e's
// status and its own text, e's status name once ("auth: bad"), as
// spi.FromError gives it (before, the wrapper's text was dropped);
// spi.ErrNotSupported and context errors keep their identity; the
// sentinels of its chain the kernel acts on (causes: spi.ErrAccessDenied,
// ...) travel as Causes.
func toPB(err error) *pb.Error {
	if err == nil {
		return nil
	}
	e := &pb.Error{Message: err.Error(), Causes: causeNames(err)}
	se, typed := spi.FromError(err)
	switch {
	case typed:
		e.Status = uint32(se.Status)
		e.Message = se.Message
	case errors.Is(err, spi.ErrNotSupported):
		e.Kind = kindNotSupported
	case errors.Is(err, context.Canceled):
		e.Kind = kindCanceled
	case errors.Is(err, context.DeadlineExceeded):
		e.Kind = kindDeadline
	}
	return e
}

// fromPB is the inverse of toPB: a status becomes an *spi.Error with the same
// Status and Message, and the sentinels of Causes as its Cause (none from
// an older plugin); kinds wrap their sentinel.
func fromPB(e *pb.Error) error {
	if e == nil {
		return nil
	}
	if e.Status != 0 {
		return &spi.Error{Status: spi.Status(e.Status), Message: e.Message, Cause: causeOf(e.Causes)}
	}
	switch e.Kind {
	case kindNotSupported:
		if e.Message == spi.ErrNotSupported.Error() {
			return spi.ErrNotSupported
		}
		return &sentinelError{e.Message, spi.ErrNotSupported}
	case kindCanceled:
		return &sentinelError{e.Message, context.Canceled}
	case kindDeadline:
		return &sentinelError{e.Message, context.DeadlineExceeded}
	}
	if cause := causeOf(e.Causes); cause != nil {
		return &sentinelError{e.Message, cause}
	}
	return errors.New(e.Message)
}

// sentinelError keeps the plugin's message and matches its sentinel.
type sentinelError struct {
	msg      string
	sentinel error
}

func (e *sentinelError) Error() string { return e.msg }
func (e *sentinelError) Unwrap() error { return e.sentinel }

// rpcError turns a gRPC failure (the plugin died mid-call, timed out) into an
// error naming the plugin point; context errors keep their identity. A
// plugin that died or whose connection broke (gRPC's Unavailable: "error
// reading from server: EOF", "connection reset by peer") is said in
// airnode's words, gRPC's text in parentheses: for the host's operator
// the "server" of gRPC's message is the plugin (tester36 F4).
func rpcError(what string, err error) error {
	switch status.Code(err) {
	case codes.Canceled:
		if strings.Contains(status.Convert(err).Message(), grpcConnClosing) {
			// the host closed its connection to the plugin, whose process
			// exited: nobody cancelled the call (tester73 #6)
			return fmt.Errorf("plugin %s: the plugin process exited and its connection was closed during the call (%s)", what, status.Convert(err).Message())
		}
		return fmt.Errorf("plugin %s: %w", what, context.Canceled)
	case codes.DeadlineExceeded:
		return fmt.Errorf("plugin %s: %w", what, context.DeadlineExceeded)
	case codes.Unavailable:
		if notSent(err) {
			return fmt.Errorf("plugin %s: could not connect to the plugin process (%s)", what, status.Convert(err).Message())
		}
		return fmt.Errorf("plugin %s: the plugin process died or its connection broke during the call (%s)", what, status.Convert(err).Message())
	}
	if s, ok := status.FromError(err); ok {
		return fmt.Errorf("plugin %s: %s (%s)", what, s.Message(), s.Code())
	}
	return fmt.Errorf("plugin %s: %w", what, err)
}

// grpcConnClosing is in the message of gRPC's Canceled for a call on a
// connection that is closed (grpc.ErrClientConnClosing): the host closes
// a plugin's when its process exits.
const grpcConnClosing = "the client connection is closing"

// recovered turns a panic in author code into a SERVER_ERROR (STYLE 12):
// "panic in plugin <where>: <value>". The stack goes to the plugin's log
// (hclog's default logger, which sdk.Serve sets to the plugin's logger),
// never into the error, which may reach a remote consumer; the lines are
// bounded per where (LogPanic). Call it from the deferred recover, so
// that the stack is the panic's.
func recovered(where string, r any) *pb.Error {
	LogPanic(hclog.L(), where, "panic in plugin code", "where", where, "panic", fmt.Sprint(r))
	e := toPB(spi.Errorf(spi.StatusServerError, "panic in plugin %s: %v", where, r))
	e.Kind = kindPanic
	return e
}

// bare is err's text without its status name when err is an *spi.Error:
// for a message that embeds it under another status, which would
// otherwise carry two status names ("SERVICE_NOT_FOUND: ...: SERVER_ERROR:
// ...", tester36 F5).
func bare(err error) string {
	se, ok := err.(*spi.Error)
	if !ok || se.Message == "" {
		return err.Error()
	}
	return strings.TrimPrefix(se.Message, se.Status.String()+": ")
}

// encodeArgs is the args summary sent to balancers and filters: the JSON
// array of the arguments, or nil when they cannot be encoded.
func encodeArgs(args []any) []byte {
	if len(args) == 0 {
		return nil
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil
	}
	return b
}

func decodeArgs(b []byte) []any {
	if len(b) == 0 {
		return nil
	}
	var args []any
	if json.Unmarshal(b, &args) != nil {
		return nil
	}
	return args
}

// toInvocation is inv for a plugin's balancer or filter, with the JSON of
// its arguments when args (a plugin that does not read them gets none:
// encoding a 1 MB argument costs the host milliseconds per call).
func toInvocation(inv *spi.Invocation, args bool) *pb.Invocation {
	if inv == nil {
		return &pb.Invocation{}
	}
	p := &pb.Invocation{Service: inv.Service, Method: inv.Method, Attachments: inv.Attachments}
	if args {
		p.ArgsJson = encodeArgs(inv.Args)
	}
	return p
}

func fromInvocation(p *pb.Invocation) *spi.Invocation {
	inv := &spi.Invocation{Service: p.GetService(), Method: p.GetMethod(), Args: decodeArgs(p.GetArgsJson())}
	if len(p.GetAttachments()) > 0 {
		inv.Attachments = p.GetAttachments()
	}
	return inv
}

// urlCache parses URL strings once: balancers see the same provider URLs on
// every Select. Bounded: it is emptied when it reaches maxURLs entries.
type urlCache struct {
	mu sync.RWMutex
	m  map[string]spi.URL
}

const maxURLs = 4096

func (c *urlCache) parse(s string) (spi.URL, error) {
	c.mu.RLock()
	u, ok := c.m[s]
	c.mu.RUnlock()
	if ok {
		return u, nil
	}
	u, err := spi.Parse(s)
	if err != nil {
		return spi.URL{}, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxURLs {
		c.m = make(map[string]spi.URL)
	}
	c.m[s] = u
	c.mu.Unlock()
	return u, nil
}

// handles numbers the extensions built inside a plugin process. Each
// point's server (filter, loadbalance) has its own, so they share no lock.
type handles[T any] struct {
	buildMu  sync.Mutex           // guards building
	building map[string]*urlBuild // per URL being built: serialises its Builds
	mu       sync.RWMutex
	next     uint64
	byID     map[uint64]T
	byURL    map[string]uint64 // dedupe for stateless builds; nil when unused
}

func (h *handles[T]) add(v T, url string) uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byID == nil {
		h.byID = make(map[uint64]T)
	}
	h.next++
	h.byID[h.next] = v
	if url != "" {
		if h.byURL == nil {
			h.byURL = make(map[string]uint64)
		}
		h.byURL[url] = h.next
	}
	return h.next
}

// urlBuild serialises the Builds of one URL; users counts the Build
// requests holding or waiting for mu, so that the entry goes when none do.
type urlBuild struct {
	mu    sync.Mutex
	users int
}

// buildOnce answers a plugin Build request for rawURL: the handle already
// built for that URL, or a new one from build. Builds of one URL run one at
// a time, so that a URL gets one handle; Builds of different URLs run
// concurrently, so that one that hangs holds up only later Builds of its
// own URL. A panic in build becomes the reply's error (what names the
// call), never a crashed plugin.
func (h *handles[T]) buildOnce(what, rawURL string, build func(spi.URL) (T, error)) (rep *pb.BuildReply) {
	defer func() {
		if r := recover(); r != nil {
			rep = &pb.BuildReply{Error: recovered(what, r)}
		}
	}()
	b := h.enterBuild(rawURL)
	defer h.leaveBuild(rawURL, b)
	b.mu.Lock()
	defer b.mu.Unlock()
	if id, ok := h.lookupURL(rawURL); ok {
		return &pb.BuildReply{Handle: id}
	}
	u, err := spi.Parse(rawURL)
	if err != nil {
		return &pb.BuildReply{Error: toPB(err)}
	}
	v, err := build(u)
	if err != nil {
		return &pb.BuildReply{Error: toPB(err)}
	}
	return &pb.BuildReply{Handle: h.add(v, rawURL)}
}

// enterBuild returns url's urlBuild, counting the caller as a user.
func (h *handles[T]) enterBuild(url string) *urlBuild {
	h.buildMu.Lock()
	defer h.buildMu.Unlock()
	if h.building == nil {
		h.building = make(map[string]*urlBuild)
	}
	b := h.building[url]
	if b == nil {
		b = &urlBuild{}
		h.building[url] = b
	}
	b.users++
	return b
}

// leaveBuild undoes enterBuild, dropping the entry its last user leaves.
func (h *handles[T]) leaveBuild(url string, b *urlBuild) {
	h.buildMu.Lock()
	defer h.buildMu.Unlock()
	if b.users--; b.users == 0 {
		delete(h.building, url)
	}
}

func (h *handles[T]) lookupURL(url string) (uint64, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	id, ok := h.byURL[url]
	return id, ok
}

func (h *handles[T]) get(id uint64) (T, error) {
	h.mu.RLock()
	v, ok := h.byID[id]
	h.mu.RUnlock()
	if !ok {
		return v, spi.Errorf(spi.StatusClientError, "pluginrpc: unknown handle %d", id)
	}
	return v, nil
}

func (h *handles[T]) remove(id uint64) {
	h.mu.Lock()
	delete(h.byID, id)
	h.mu.Unlock()
}
