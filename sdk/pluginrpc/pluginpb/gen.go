// Package pluginpb is the generated gRPC code of plugin.proto, the contract
// between an airnode host and its plugin processes. Do not edit the .pb.go
// files; change plugin.proto and regenerate (protoc 3.21+, protoc-gen-go
// v1.36.12, protoc-gen-go-grpc v1.6):
//
//	apt-get install -y protobuf-compiler
//	go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
//	go generate ./sdk/pluginrpc/pluginpb
package pluginpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative plugin.proto
