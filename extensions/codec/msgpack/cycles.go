package msgpack

import "github.com/airnode/airnode/internal/cyclecheck"

// CheckCycles returns an error for a value that msgpack would encode
// without end: a value that reaches itself ("encountered a cycle via
// *main.Node", encoding/json's words) or one nested deeper than MaxDepth
// maps and arrays. msgpack encodes by recursion, and such a value
// overflowed the stack, a fatal error that killed the whole process.
// Struct fields are the ones msgpack encodes: fallbackTag
// names the struct tag read when a field has no msgpack tag, "json" for
// this codec's Encoder (whose Encode makes this check), "" for
// msgpack.Marshal. The common values (strings, []byte, numbers, structs
// that cannot reach themselves) cost a type switch or a type comparison
// and a map lookup, and no allocation. Safe for concurrent use. The walk
// is internal/cyclecheck's, shared with the plugin hop.
func CheckCycles(v any, fallbackTag string) error { return cyclecheck.Check(v, fallbackTag) }
