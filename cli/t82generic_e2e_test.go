package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/internal/demo"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// t82Order is the struct parameter of t82Gen.Put; t82Tier has a field a
// "class" key matches.
type t82Order struct {
	ID    int
	Items []t82Item
}

type t82Item struct{ SKU string }

type t82Tier struct {
	Class string `json:"class" msgpack:"class"`
}

type t82Gen struct{}

func (t82Gen) Put(ctx context.Context, o t82Order) (t82Order, error) { return o, nil }
func (t82Gen) Tier(ctx context.Context, t t82Tier) (string, error)   { return t.Class, nil }

// tester82 #4: airnode call with Dubbo's "class" type hints in object
// maps (as Dubbo's generic clients send them) reaches the method, under
// msgpack and json; a struct with a class field still gets it; $invoke
// gets SERVICE_NOT_FOUND saying airnode has none and how to call.
func TestT82_DubboClassHintAndInvoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prov := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = prov.Close() })
	exp, err := prov.Export(ctx, t82Gen{}, spi.MustParse("airnode://127.0.0.1:0/t.Gen"))
	if err != nil {
		t.Fatal(err)
	}
	echo, err := prov.Export(ctx, demo.New("p", 100), spi.MustParse("airnode://127.0.0.1:0/demo.Echo"))
	if err != nil {
		t.Fatal(err)
	}
	for _, codec := range []string{"msgpack", "json"} {
		u := "airnode://" + exp.URL().Address() + "/t.Gen?codec=" + codec
		r := call(t, nil, u, "Put", `{"class":"com.foo.Order","ID":7,"Items":[{"class":"com.foo.Item","SKU":"A-1"}]}`)
		if r.code != 0 || strings.Join(strings.Fields(r.stdout), "") != `{"ID":7,"Items":[{"SKU":"A-1"}]}` {
			t.Errorf("%s: Put with class hints: exit %d, stdout %q, stderr %q", codec, r.code, r.stdout, r.stderr)
		}
		r = call(t, nil, u, "Tier", `{"class":"gold"}`)
		if r.code != 0 || strings.TrimSpace(r.stdout) != `"gold"` {
			t.Errorf("%s: Tier: exit %d, stdout %q, stderr %q; want the class field set", codec, r.code, r.stdout, r.stderr)
		}
		r = call(t, nil, u, "Put", `{"class":"com.foo.Order","ID":7,"bogus":1}`)
		if r.code == 0 || !strings.Contains(r.stderr, `unknown field "bogus"`) {
			t.Errorf("%s: Put with bogus: exit %d, stderr %q; want BAD_REQUEST naming bogus", codec, r.code, r.stderr)
		}
	}
	r := call(t, nil, "airnode://"+echo.URL().Address()+"/demo.Echo", "$invoke", `"Echo"`, `["java.lang.String"]`, `["hi"]`)
	if r.code == 0 || !strings.Contains(r.stderr, "SERVICE_NOT_FOUND") || !strings.Contains(r.stderr, "airnode has no $invoke: call the method by name") {
		t.Errorf("$invoke: exit %d, stderr %q", r.code, r.stderr)
	}
}
