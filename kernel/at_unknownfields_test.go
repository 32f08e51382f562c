package kernel

import (
	"strings"
	"testing"
)

// evoUserV3 is evoUserV2 with two fields evoUserV1 lacks in one object.
type evoUserV3 struct {
	ID    int64
	Name  string
	Email string
	Phone string
	Age   int
	Addr  evoAddrV1
}

// tester79 #9: a codec now names every unknown key of an object at once
// ("unknown fields ..."). A newer consumer whose struct adds two fields
// still reaches an older provider, which ignores both and warns naming
// both (spi.UnknownField reads the plural form too), with both codecs.
func TestAT_NewerConsumerTwoFieldsIgnored(t *testing.T) {
	for _, codec := range []string{"msgpack", "json"} {
		t.Run(codec, func(t *testing.T) {
			old, logs := evoProvider(t, evoUsersV1{})
			r := refer(t, consumer(t), "airnode://"+old.URL().Address()+"/evo.Users?codec="+codec)
			var s string
			newer := evoUserV3{ID: 7, Name: "bob", Email: "b@x", Phone: "123", Age: 3, Addr: evoAddrV1{City: "Rome"}}
			if err := r.Call(ctxT(t), "Put", []any{newer}, &s); err != nil || s != "v1 7 bob 3 Rome" {
				t.Fatalf("newer consumer Put to older provider = %q, %v; want \"v1 7 bob 3 Rome\"", s, err)
			}
			if out := logs(); !strings.Contains(out, `unknown fields \"Email\", \"Phone\" in evoUserV1 (fields: ID, Name, Age, Addr)`) {
				t.Errorf("the provider's warning does not name both fields:\n%s", out)
			}
		})
	}
}
