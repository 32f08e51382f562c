// Command cutoff is a test plugin whose gRPC connection to its host
// breaks while its process lives: on SIGUSR1 it stops its gRPC server
// (grpc.Server.Stop: the listener closed, the host's connection cut) and
// goes on running, answering nothing. It serves a service, acme.Cut
// (Pid() returns the process's PID), and a filter, "cutfilter" (both
// sides), which passes every call with its attachments.
package main

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/sdk/pluginrpc"
	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
)

// Cut is the service.
type Cut struct{}

// Pid returns the plugin process's PID.
func (Cut) Pid() int { return os.Getpid() }

type filter struct{ pb.UnimplementedFilterServer }

func (filter) Describe(context.Context, *pb.Empty) (*pb.FilterDescribe, error) {
	return &pb.FilterDescribe{Name: "cutfilter", Sides: []string{"consumer", "provider"}}, nil
}

func (filter) Build(context.Context, *pb.BuildRequest) (*pb.BuildReply, error) {
	return &pb.BuildReply{Handle: 1}, nil
}

func (filter) Invoke(_ context.Context, req *pb.FilterRequest) (*pb.FilterReply, error) {
	return &pb.FilterReply{Pass: true, Attachments: req.GetInvocation().GetAttachments()}, nil
}

type filterPlugin struct{ plugin.NetRPCUnsupportedPlugin }

func (filterPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterFilterServer(s, filter{})
	return nil
}

func (filterPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("cutoff: serves only")
}

func main() {
	impl, err := sdk.Plugins{Services: []sdk.Service{{Name: "acme.Cut", Impl: Cut{}}}}.Impl()
	if err != nil {
		panic(err)
	}
	set := pluginrpc.ServerPlugins(impl)
	set[pluginrpc.ProtocolVersion][pluginrpc.PointFilter] = filterPlugin{}
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  pluginrpc.Handshake,
		VersionedPlugins: set,
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			s := grpc.NewServer(opts...)
			go func() {
				<-usr1
				s.Stop()
			}()
			return s
		},
	})
	select {} // the server stopped: live on, unreachable, until killed
}
