// Package protocycle refuses, before proto.Marshal recurses into it, a
// protocol buffer message that reaches itself (a google.protobuf.Struct
// holding itself, a recursive message type whose field points back) or
// that nests messages deeper than protowire.DefaultRecursionLimit (10000,
// the bound proto.Unmarshal puts on every peer). proto.Marshal has no such
// check: it recursed until Go's stack limit, a fatal error that no recover
// catches, killing the process. Only messages whose type can nest itself
// are walked, decided once per message descriptor. Safe for concurrent
// use.
package protocycle
