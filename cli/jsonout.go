package cli

import (
	"encoding/json"
	"io"
)

// jsonOutput returns the encoder of every JSON document the command line
// prints (registry ls --json, stats --json, bench --json and its failure
// object): indented by two spaces, and with &, < and > written as they are
// rather than as Go's HTML-safe \u0026, \u003c and \u003e, which only
// make a URL ("?a=1&b=2") harder to read and to grep. call's result is
// encoded the same way, unindented.
func jsonOutput(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc
}
