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
// host asks each plugin process when it starts it, balancer and filter
// alike: a restart or handover into another build takes that build's
// answer from its next call.
type ArgumentsReader = pluginrpc.ArgumentsReader

// ResultReader is the optional interface of a filter's builder that says
// whether its filters use what next.Invoke returns. Without the method,
// or answering true, a filter's next.Invoke runs the rest of the chain in
// the host (the real invoke) and returns the real result (value, error
// with its status, response attachments), and what the filter returns is
// the caller's result: it can time, map, replace the result. A gate that
// only sets attachments or refuses, and returns next's result unchanged,
// can say
//
//	func (Builder) ReadsResult() bool { return false }
//
// to save a round trip per call: next.Invoke then returns an empty result
// at once and the call runs in the host after the filter answered. The
// host asks each plugin process when it starts it (a restart into another
// build takes that build's answer). Either way, arguments the filter
// changes before next.Invoke are the ones the call goes on with (see
// "Changing a call's arguments in a filter" in the sdk's README).
type ResultReader = pluginrpc.ResultReader
