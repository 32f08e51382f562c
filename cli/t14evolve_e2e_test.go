package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// evoUsers is a Go service with a struct argument, exported by the kernel
// in process.
type evoUsers struct{}

// evoUser is evoUsers' argument.
type evoUser struct {
	ID   int64
	Name string
	Age  int
}

func (evoUsers) Put(_ context.Context, u evoUser) (string, error) {
	return fmt.Sprintf("put %d %s %d", u.ID, u.Name, u.Age), nil
}

// tester14 finding 1: providers now ignore a struct field they do not
// know when a typed consumer sends it (a consumer newer than its
// provider), but `airnode call` is a generic invocation — its calls carry
// the attachment generic=true, Dubbo's mark — and keeps the typo check: a
// misspelt key is BAD_REQUEST naming it, the struct's fields and the
// nearest, with either codec. -a generic=false sends the call as a typed
// consumer would: the key is ignored.
func TestT14_1_CallKeepsTheTypoCheck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prov := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { _ = prov.Close() })
	exp, err := prov.Export(ctx, evoUsers{}, spi.MustParse("airnode://127.0.0.1:0/evo.Users"))
	if err != nil {
		t.Fatal(err)
	}
	target := "airnode://" + exp.URL().Address() + "/evo.Users"
	for _, codec := range []string{"msgpack", "json"} {
		t.Run(codec, func(t *testing.T) {
			expectFail(t, call(t, nil, "--codec", codec, target, "Put", `{"ID":1,"Nmae":"bob","Age":3}`),
				"BAD_REQUEST: ",
				`evo.Users.Put argument 0 (cli.evoUser): got a map with unknown field "Nmae" in evoUser (fields: ID, Name, Age); did you mean "Name"?`)
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{`{"ID":1,"Name":"bob","Age":3}`}, `"put 1 bob 3"`},
				{[]string{`{"ID":1,"Nmae":"bob","Age":3}`, "-a", "generic=false"}, `"put 1  3"`},
			} {
				r := call(t, nil, append([]string{"--codec", codec, target, "Put"}, c.args...)...)
				if r.code != 0 || strings.TrimSpace(r.stdout) != c.want {
					t.Errorf("call Put %s: exit %d, stdout %q, stderr %q; want %s", strings.Join(c.args, " "), r.code, r.stdout, r.stderr, c.want)
				}
			}
		})
	}
}
