package sdk

import "github.com/airnode/airnode/sdk/pluginrpc"

// ArgumentsReader is the optional interface of a balancer's or filter's
// builder that says whether its balancers or filters read the call's
// arguments (Invocation.Args). A builder with
//
//	func (Builder) ReadsArguments() bool { return false }
//
// gets every Select and filter call without them (Args nil): the host no
// longer encodes them to JSON per call, which for a 1 MB argument saves
// milliseconds per call. Without the method the arguments are sent. The
// host asks once, when it starts the plugin.
type ArgumentsReader = pluginrpc.ArgumentsReader
