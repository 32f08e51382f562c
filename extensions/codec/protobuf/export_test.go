package protobuf

// AppendJSON is appendJSON for the external tests: the KindJSON form of a
// generic map or array, which providers read and the Encoder does not send
// yet.
func AppendJSON(b []byte, v any) ([]byte, error) { return appendJSON(b, v) }
