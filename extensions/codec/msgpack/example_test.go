package msgpack_test

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/airnode/airnode/extensions/codec/msgpack"
)

// A body is a sequence of values; read generically, a result prints as JSON.
func Example() {
	var body bytes.Buffer
	enc := msgpack.Codec{}.NewEncoder(&body)
	enc.Encode("demo.Echo")
	enc.Encode(map[string]any{"n": 1, "tags": []string{"a", "b"}})

	dec := msgpack.Codec{}.NewDecoder(bytes.NewReader(body.Bytes()))
	var service string
	var result any
	dec.Decode(&service)
	dec.Decode(&result)
	out, _ := json.Marshal(result)
	fmt.Println(service, string(out))
	// Output: demo.Echo {"n":1,"tags":["a","b"]}
}
