package tenant_test

import (
	"context"
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/airnode/airnode/examples/tenant"
	"github.com/airnode/airnode/sdk/sdktest"
	"github.com/airnode/airnode/spi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Both sides through the plugin's gRPC adaptation (sdktest.Filter): the
// consumer's filter attaches its tenant, the provider's lets that tenant
// through and refuses none or another with BAD_REQUEST and
// spi.ErrAccessDenied, which crosses the plugin boundary.
func TestConsumerAttachesProviderRefuses(t *testing.T) {
	b := sdktest.Filter(t, tenant.Builder{})
	if a := b.Activation(); a.Key != tenant.Key || len(a.Sides) != 2 {
		t.Fatalf("activation %+v, want both sides on key %q", a, tenant.Key)
	}
	c, err := b.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=consumer&tenant=acme"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Build(spi.MustParse("airnode://127.0.0.1/demo.Echo?side=provider&tenant=acme,globex"))
	if err != nil {
		t.Fatal(err)
	}
	service := spi.InvokerFunc(func(_ context.Context, inv *spi.Invocation) spi.Result { return spi.Result{Value: "ran"} })
	var sent *spi.Invocation
	wire := spi.InvokerFunc(func(ctx context.Context, inv *spi.Invocation) spi.Result {
		sent = inv
		return p.Invoke(ctx, service, inv) // the provider's chain
	})
	ctx := context.Background()
	if r := c.Invoke(ctx, wire, &spi.Invocation{Service: "demo.Echo", Method: "Echo"}); r.Err != nil || r.Value != "ran" {
		t.Fatalf("tenant acme: %v, %v; want the service's answer", r.Value, r.Err)
	}
	if got := sent.Attachment(tenant.Attachment); got != "acme" {
		t.Fatalf("attachment %q, want acme", got)
	}
	for _, who := range []string{"", "initech"} {
		inv := &spi.Invocation{Service: "demo.Echo", Method: "Echo"}
		if who != "" {
			inv.SetAttachment(tenant.Attachment, who)
		}
		r := p.Invoke(ctx, service, inv)
		if !errors.Is(r.Err, spi.ErrBadRequest) || !errors.Is(r.Err, spi.ErrAccessDenied) {
			t.Errorf("tenant %q: %v; want BAD_REQUEST with Cause ErrAccessDenied", who, r.Err)
		}
	}
}

// An empty value, or one of commas only, is a Build error, not a
// provider that lets through calls without a tenant.
func TestEmptyValueIsABuildError(t *testing.T) {
	for _, v := range []string{"", ",", " , "} {
		u := spi.MustParse("airnode://127.0.0.1/demo.Echo?side=provider").With(tenant.Key, v)
		if _, err := (tenant.Builder{}).Build(u); err == nil {
			t.Errorf("tenant=%q built; want an error", v)
		}
	}
	if err := spi.ValidateKeys(tenant.Builder{}.Keys()); err != nil {
		t.Fatal(err)
	}
}
