package pluginrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/airnode/airnode/internal/cyclecheck"
	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
	"github.com/airnode/airnode/spi"
)

// Codec encodes the arguments and results of service calls between host
// and plugin.
type Codec interface {
	Name() string
	Marshal(v any) ([]byte, error)
	Unmarshal(b []byte, v any) error
}

// Codec names.
const (
	CodecMsgpack = "msgpack"
	CodecJSON    = "json"
)

type msgpackCodec struct{}

func (msgpackCodec) Name() string { return CodecMsgpack }

// Marshal is msgpack.Marshal, which recursed into a value that reaches
// itself (n.Next = n) until a fatal stack overflow that killed the plugin
// or the host: such a value, or one nested deeper than 10000 maps and
// arrays, is an error here first (the airnode codec's check, with
// msgpack.Marshal's field names: no json tag fallback).
func (msgpackCodec) Marshal(v any) ([]byte, error) {
	if err := cyclecheck.Check(v, ""); err != nil {
		return nil, fmt.Errorf("msgpack: encode %T: %w", v, err)
	}
	return msgpack.Marshal(v)
}
func (msgpackCodec) Unmarshal(b []byte, v any) error { return msgpack.Unmarshal(b, v) }

type jsonCodec struct{}

func (jsonCodec) Name() string                    { return CodecJSON }
func (jsonCodec) Marshal(v any) ([]byte, error)   { return json.Marshal(v) }
func (jsonCodec) Unmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// CodecByName returns the codec named name ("msgpack" or "json").
func CodecByName(name string) (Codec, error) {
	switch name {
	case CodecMsgpack, "":
		return msgpackCodec{}, nil
	case CodecJSON:
		return jsonCodec{}, nil
	}
	return nil, fmt.Errorf("pluginrpc: unknown codec %q (available: json, msgpack)", name)
}

// ServiceDesc names one service a plugin provides and its methods (sorted).
// WithoutContext lists, sorted, those of Methods that take no leading
// context.Context (they see neither the call's deadline nor its
// attachments); nil from a plugin built before the field existed.
// Warnings are problems the sdk found in the implementation that make
// calls fail or methods go missing (an argument or result type no codec
// can carry; methods of a pointer receiver that a value Impl leaves
// out), one sentence each, which `airnode plugin check` prints; nil from
// a plugin built before the field existed.
type ServiceDesc struct {
	Name           string
	Methods        []string
	WithoutContext []string
	Warnings       []string
}

// ServiceHandler is the plugin side of the service point (package sdk
// implements it over ordinary Go values).
type ServiceHandler interface {
	// Describe lists the services, sorted by name.
	Describe() []ServiceDesc
	// Invoke calls method of service with args, each encoded by codec, and
	// returns the encoded result. Failures are *spi.Error (SERVICE_NOT_FOUND
	// for an unknown service or method, BAD_REQUEST for undecodable
	// arguments, SERVICE_ERROR for an error of the method). Concurrent.
	Invoke(ctx context.Context, service, method string, args [][]byte, codec Codec, attachments map[string]string) ([]byte, error)
}

// ---------------------------------------------------------------- plugin side

type serviceServer struct {
	pb.UnimplementedServiceServer
	h ServiceHandler
}

func (s *serviceServer) Describe(context.Context, *pb.Empty) (*pb.ServiceDescList, error) {
	var out pb.ServiceDescList
	for _, d := range s.h.Describe() {
		out.Services = append(out.Services, &pb.ServiceDesc{Name: d.Name, Methods: d.Methods, WithoutContext: d.WithoutContext, Warnings: d.Warnings})
	}
	return &out, nil
}

func (s *serviceServer) Invoke(ctx context.Context, req *pb.InvokeRequest) (rep *pb.InvokeReply, _ error) {
	defer func() {
		if r := recover(); r != nil {
			rep = &pb.InvokeReply{Error: recovered(req.Service+"."+req.Method, r)}
		}
	}()
	codec, err := CodecByName(req.Codec)
	if err != nil {
		return &pb.InvokeReply{Error: toPB(spi.Errorf(spi.StatusBadRequest, "%v", err))}, nil
	}
	v, err := s.h.Invoke(ctx, req.Service, req.Method, req.Args, codec, req.Attachments)
	if err != nil {
		return &pb.InvokeReply{Error: toPB(err)}, nil
	}
	return &pb.InvokeReply{Value: v}, nil
}

// ---------------------------------------------------------------- host side

// ServiceOptions configure the invoker of one plugin service.
type ServiceOptions struct {
	// Service is the service name in the plugin ("greeter.Greeter").
	Service string
	// URL is the invoker's URL (the export URL).
	URL    spi.URL
	Source Source
	// Codec carries arguments and results; default msgpack.
	Codec Codec
	// OnDeadline, when set, is called (on the calling goroutine, so it
	// must not block) for each call whose deadline passed before the
	// plugin answered it, or that was cancelled within DeadlineSlack of
	// its deadline (its consumer timed out first and went away): the
	// host counts them into a rate-bounded warning naming the plugin.
	// Nil: nothing is called.
	OnDeadline func(method string)
}

// DeadlineSlack is how close to its deadline a service call cancelled by
// the host (its consumer went away) counts as one whose deadline passed
// unanswered (ServiceOptions.OnDeadline): the consumer's timer starts
// before the request is sent, so it fires a moment before the provider's.
const DeadlineSlack = 250 * time.Millisecond

// NewServiceInvoker returns a spi.Invoker that forwards every invocation of
// o.Service to the plugin process. While the plugin is down it is not
// Available and Invoke fails fast with SERVICE_NOT_FOUND naming the reason
// (the call did not run); a call the plugin had when its process died or
// its connection broke fails CHANNEL_INACTIVE saying it may have run.
func NewServiceInvoker(o ServiceOptions) spi.Invoker {
	if o.Codec == nil {
		o.Codec = msgpackCodec{}
	}
	return &serviceInvoker{o: o, stats: &spi.Stats{}}
}

type serviceInvoker struct {
	o     ServiceOptions
	stats *spi.Stats
}

func (s *serviceInvoker) URL() spi.URL { return s.o.URL }

func (s *serviceInvoker) Available() bool {
	_, _, err := s.o.Source.Current()
	return err == nil
}

// Stats are the invoker's statistics, kept by the kernel.
func (s *serviceInvoker) Stats() *spi.Stats { return s.stats }

func (s *serviceInvoker) Close() error { return nil }

// notRun is the error of a call the plugin never got: it is not running
// (restarting after a crash, or stopped), or its socket refused the
// connection. SERVICE_NOT_FOUND, as a provider answers for a service it
// does not serve now: the call did not run, so a failover cluster retries
// it on another provider whatever the method (a provider whose plugin
// crashed failed those calls, idempotent or not, while its healthy
// sibling stood by: new-user tester). A call the plugin may have received
// before it died is CHANNEL_INACTIVE "... so it may have run" (died).
// err's own status name (the host's SERVER_ERROR "plugin ... is
// unavailable") is left out: one status name per message.
func (s *serviceInvoker) notRun(err error) error {
	return spi.Errorf(spi.StatusServiceNotFound, "service %s: %s (the call did not run)", s.o.Service, bare(err))
}

// notSent reports whether a failed gRPC call never reached the plugin:
// the connection to its socket could not be made (grpc-go fails such a
// call fast with Unavailable "... while dialing ...").
func notSent(err error) bool {
	st, ok := status.FromError(err)
	return ok && st.Code() == codes.Unavailable && strings.Contains(st.Message(), "while dialing")
}

// died reports whether a failed gRPC call that reached the plugin (not
// notSent) failed because the plugin process died or the connection to it
// broke: Unavailable ("error reading from server: EOF", "connection reset
// by peer"), or Canceled while ctx is not (the host closed the dead
// plugin's client first). The call was handed to the plugin, which may
// have run it: CHANNEL_INACTIVE, which the consumer reads as
// spi.ErrRequestSent, as for a provider connection that dies after the
// request was sent (failover retries it only for idempotent methods).
func died(ctx context.Context, err error) bool {
	switch status.Code(err) {
	case codes.Unavailable:
		return true
	case codes.Canceled:
		return ctx.Err() == nil
	}
	return false
}

func (s *serviceInvoker) Invoke(ctx context.Context, inv *spi.Invocation) spi.Result {
	c, _, err := s.o.Source.Current()
	if err != nil {
		return spi.Result{Err: s.notRun(err)}
	}
	req := &pb.InvokeRequest{Service: s.o.Service, Method: inv.Method, Codec: s.o.Codec.Name(),
		Args: make([][]byte, len(inv.Args)), Attachments: inv.Attachments}
	for i, a := range inv.Args {
		b, err := s.o.Codec.Marshal(a)
		if err != nil {
			return spi.Result{Err: spi.Errorf(spi.StatusSerializationError, "service %s: argument %d of %s: %v", s.o.Service, i, inv.Method, err)}
		}
		req.Args[i] = b
	}
	rep, err := c.Service.Invoke(ctx, req)
	if err != nil && notSent(err) {
		return spi.Result{Err: s.notRun(fmt.Errorf("plugin call %s: %s", inv.Method, status.Convert(err).Message()))}
	}
	if err != nil && died(ctx, err) {
		return spi.Result{Err: spi.Errorf(spi.StatusChannelInactive,
			"service %s: the plugin process died or its connection broke during the call %s, so it may have run (%s)",
			s.o.Service, inv.Method, status.Convert(err).Message())}
	}
	if err != nil && (status.Code(err) == codes.DeadlineExceeded || errors.Is(ctx.Err(), context.DeadlineExceeded)) {
		// wraps context.DeadlineExceeded: the exchange words it as for an
		// in-process method ("call S.M timed out after 1s on the
		// provider (...)"), not as gRPC's stream error
		if s.o.OnDeadline != nil {
			s.o.OnDeadline(inv.Method)
		}
		return spi.Result{Err: &spi.Error{Status: spi.StatusServerTimeout, Cause: context.DeadlineExceeded,
			Message: fmt.Sprintf("service %s: the call's deadline passed while the plugin ran %s", s.o.Service, inv.Method)}}
	}
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		// the host gave up on the call (a shutdown abandoning it, the
		// connection closing): the plugin's method had not returned
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < DeadlineSlack && s.o.OnDeadline != nil {
			// a consumer whose own timer fired first, a moment before
			// ours, and that went away (airnode call exits): its call
			// passed its deadline unanswered as well
			s.o.OnDeadline(inv.Method)
		}
		return spi.Result{Err: &spi.Error{Status: spi.StatusServerError, Cause: unfinished{context.Canceled},
			Message: fmt.Sprintf("service %s: the host cancelled its call of %s in the plugin, whose method had not returned", s.o.Service, inv.Method)}}
	}
	if err != nil {
		return spi.Result{Err: spi.Errorf(spi.StatusServerError, "service %s: plugin call %s: %v", s.o.Service, inv.Method, status.Convert(err).Message())}
	}
	if rep.Error != nil {
		return spi.Result{Err: fromPB(rep.Error), Attachments: rep.Attachments}
	}
	res := spi.Result{Attachments: rep.Attachments}
	if len(rep.Value) > 0 {
		if inv.Reply != nil {
			err = s.o.Codec.Unmarshal(rep.Value, inv.Reply)
			res.Value = inv.Reply
		} else {
			err = s.o.Codec.Unmarshal(rep.Value, &res.Value)
		}
		if err != nil {
			return spi.Result{Err: spi.Errorf(spi.StatusSerializationError, "service %s: result of %s: %v", s.o.Service, inv.Method, err)}
		}
	}
	return res
}

// unfinished is the cause of a call the host cancelled before the
// plugin's method returned: the kernel's and the exchange's "the call was
// abandoned (the method returned: ...)" leave out "the method returned"
// for an error whose chain has a MethodUnfinished method.
type unfinished struct{ err error }

func (u unfinished) Error() string        { return u.err.Error() }
func (u unfinished) Unwrap() error        { return u.err }
func (unfinished) MethodUnfinished() bool { return true }

var _ spi.Invoker = (*serviceInvoker)(nil)
