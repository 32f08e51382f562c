// Command unaryfilter is a test filter plugin ("switchfilter", both
// sides) as a plugin built with an sdk from before Filter.Chain serves
// it: Describe (no chain), Build and the unary Invoke, which passes the
// call with its attachments; Filter.Chain is unimplemented. chainfilter
// is its other build.
package main

import (
	"context"
	"errors"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/airnode/airnode/sdk/pluginrpc"
	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
)

type server struct{ pb.UnimplementedFilterServer }

func (server) Describe(context.Context, *pb.Empty) (*pb.FilterDescribe, error) {
	return &pb.FilterDescribe{Name: "switchfilter", Sides: []string{"consumer", "provider"}}, nil
}

func (server) Build(context.Context, *pb.BuildRequest) (*pb.BuildReply, error) {
	return &pb.BuildReply{Handle: 1}, nil
}

func (server) Invoke(_ context.Context, req *pb.FilterRequest) (*pb.FilterReply, error) {
	return &pb.FilterReply{Pass: true, Attachments: req.GetInvocation().GetAttachments()}, nil
}

type grpcPlugin struct{ plugin.NetRPCUnsupportedPlugin }

func (grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterFilterServer(s, server{})
	return nil
}

func (grpcPlugin) GRPCClient(context.Context, *plugin.GRPCBroker, *grpc.ClientConn) (any, error) {
	return nil, errors.New("unaryfilter: serves only")
}

func main() {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  pluginrpc.Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{pluginrpc.ProtocolVersion: {pluginrpc.PointFilter: grpcPlugin{}}},
		GRPCServer:       plugin.DefaultGRPCServer,
	})
}
