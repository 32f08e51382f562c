package pluginrpc

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
	"github.com/airnode/airnode/spi"
)

// Description is what a plugin says it provides for one point.
type Description struct {
	Point string
	// Name is the extension's own Name() (empty for the service point).
	Name string
	// Activation is a filter's activation.
	Activation spi.Activation
	// Services lists a service plugin's services.
	Services []ServiceDesc
	// Keys are the URL keys the extension declares it reads
	// (spi.KeyDescriber in the plugin); nil when it declares none.
	Keys []spi.KeyDoc
	// WithoutArgs: a balancer or filter whose builder is an
	// ArgumentsReader answering false; the host then sends its Select and
	// filter requests without the call's arguments.
	WithoutArgs bool
	// Chain: a filter plugin that serves Filter.Chain, a real next
	// (FilterOptions.Chain); false for one built with an older sdk or
	// whose builder's ResultReader answers false.
	Chain bool
	// ReadOnly: a registry whose builder is an spi.ReadOnlyRegistry
	// answering true.
	ReadOnly bool
	// Reach is a registry builder's spi.RegistryReacher answer
	// (spi.ReachShared when it does not implement it).
	Reach spi.RegistryReach
}

// ArgumentsReader is an optional interface of a plugin's
// spi.LoadBalanceBuilder or spi.FilterBuilder. ReadsArguments false says
// its balancers or filters never read Invocation.Args: the host then
// stops encoding the call's arguments to JSON for every Select or filter
// call (a 1 MB argument costs the host about 2 ms per call; see
// sdk/README's cost table), and they see Args nil. A builder without the
// method, or answering true, gets the arguments (protocol version 1's
// behaviour). Asked when the host starts the plugin process, each
// process anew (a restart or handover into another build of the binary
// takes that build's answer from the next call).
type ArgumentsReader interface {
	ReadsArguments() bool
}

// withoutArgs reports whether b said it does not read arguments.
func withoutArgs(b any) bool {
	r, ok := b.(ArgumentsReader)
	return ok && !r.ReadsArguments()
}

// Describe asks the plugin behind c what it provides for point. A plugin
// that does not serve point is an error saying so, and so are key
// declarations spi.ValidateKeys refuses (the catalogs stay strict).
func Describe(ctx context.Context, c *Client, point string) (Description, error) {
	d := Description{Point: point}
	var err error
	switch point {
	case PointLoadBalance:
		var r *pb.Describe
		if r, err = c.LoadBalance.Describe(ctx, &pb.Empty{}); err == nil {
			d.Name, d.Keys, d.WithoutArgs = r.Name, keysFromPB(r.Keys), r.WithoutArgs
		}
	case PointRegistry:
		var r *pb.Describe
		if r, err = c.Registry.Describe(ctx, &pb.Empty{}); err == nil {
			d.Name, d.Keys, d.ReadOnly, d.Reach = r.Name, keysFromPB(r.Keys), r.ReadOnly, reachFromPB(r.Reach)
		}
	case PointFilter:
		var r *pb.FilterDescribe
		if r, err = c.Filter.Describe(ctx, &pb.Empty{}); err == nil {
			d.Name, d.Keys, d.WithoutArgs, d.Chain = r.Name, keysFromPB(r.Keys), r.WithoutArgs, r.Chain
			d.Activation = spi.Activation{Key: r.Key, Order: int(r.Order)}
			for _, s := range r.Sides {
				d.Activation.Sides = append(d.Activation.Sides, spi.Side(s))
			}
		}
	case PointService:
		var rep *pb.ServiceDescList
		if rep, err = c.Service.Describe(ctx, &pb.Empty{}); err == nil {
			for _, s := range rep.Services {
				d.Services = append(d.Services, ServiceDesc{Name: s.Name, Methods: s.Methods, WithoutContext: s.WithoutContext, Warnings: s.Warnings})
			}
		}
	default:
		return d, fmt.Errorf("pluginrpc: unknown point %q (available: filter, loadbalance, registry, service)", point)
	}
	if status.Code(err) == codes.Unimplemented {
		return d, fmt.Errorf("plugin does not provide point %q", point)
	}
	if err != nil {
		return d, rpcError(point+" Describe", err)
	}
	if err := spi.ValidateKeys(d.Keys); err != nil {
		return d, fmt.Errorf("pluginrpc: %s %q declares bad URL keys: %w", point, d.Name, err)
	}
	return d, nil
}

// reachToPB is b's spi.RegistryReacher answer for the wire ("" when b
// does not implement it).
func reachToPB(b any) string {
	if r, ok := b.(spi.RegistryReacher); ok {
		return r.Reach().String()
	}
	return ""
}

// reachFromPB is the inverse of reachToPB; "" and unknown words are
// spi.ReachShared, the default of a builder that does not say.
func reachFromPB(s string) spi.RegistryReach {
	switch s {
	case spi.ReachProcess.String():
		return spi.ReachProcess
	case spi.ReachNone.String():
		return spi.ReachNone
	}
	return spi.ReachShared
}
