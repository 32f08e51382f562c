// Command acmeplug is a test plugin serving a filter and a registry, as a
// third party's plugin would:
//
//   - filter "acme.authz" (provider side, activated by "authz.key"): a call
//     passes when its "x-auth" attachment equals authz.key. Build refuses an
//     "authz.rate" that is not an integer, and never returns when
//     "authz.build" is "hang".
//   - registry "acme.dirreg": the memory registry of this process; with
//     R_MODE=readonly in the environment its builder says it is read-only
//     (spi.ReadOnlyRegistry) and Register answers spi.ErrNotSupported,
//     while Unregister of a URL it never registered is a no-op, as
//     spi.Registry requires (so no withdraw dry-run can tell).
package main

import (
	"context"
	"os"

	"github.com/airnode/airnode/extensions/registry/memory"
	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/spi"
)

// authz is the filter builder.
type authz struct{}

func (authz) Name() string { return "acme.authz" }
func (authz) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Provider}, Key: "authz.key"}
}
func (authz) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{
		{Key: "authz.key", Type: "string", Doc: "the x-auth attachment a call must carry"},
		{Key: "authz.rate", Type: "int", Default: "0", Doc: "calls per second, 0 = unlimited"},
		{Key: "authz.build", Type: "string", Doc: "test switch: hang makes Build never return"},
	}
}

func (authz) Build(u spi.URL) (spi.Filter, error) {
	if v, _ := u.Param("authz.build"); v == "hang" {
		select {}
	}
	if _, err := u.Int("authz.rate", 0); err != nil {
		return nil, err
	}
	key, _ := u.Param("authz.key")
	return filter{key: key}, nil
}

type filter struct{ key string }

func (f filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	if inv.Attachment("x-auth") != f.key {
		return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "acme.authz: bad x-auth")}
	}
	return next.Invoke(ctx, inv)
}

// dirreg is the registry builder: one memory backend per process.
type dirreg struct {
	readOnly bool
	mem      *memory.Builder
}

func (dirreg) Name() string     { return "acme.dirreg" }
func (b dirreg) ReadOnly() bool { return b.readOnly }

func (b dirreg) Build(u spi.URL) (spi.Registry, error) {
	r, err := b.mem.Build(u)
	if err != nil || !b.readOnly {
		return r, err
	}
	return readOnly{r}, nil
}

// readOnly refuses Register; the rest is the memory registry's.
type readOnly struct{ spi.Registry }

func (readOnly) Register(context.Context, spi.URL) error { return spi.ErrNotSupported }

func main() {
	sdk.Serve(sdk.Plugins{Filter: authz{}, Registry: dirreg{readOnly: os.Getenv("R_MODE") == "readonly", mem: memory.NewBuilder()}})
}
