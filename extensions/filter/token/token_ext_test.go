package token_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/filter/token"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

func build(t *testing.T, q string) *token.Filter {
	t.Helper()
	f, err := token.Builder{}.Build(spi.MustParse("airnode://h:1/s?" + q))
	if err != nil {
		t.Fatal(err)
	}
	return f.(*token.Filter)
}

func TestBuildErrors(t *testing.T) {
	for q, want := range map[string]string{
		"side=provider&token=":        "empty",
		"side=provider&token=true":    "random",
		"side=provider&token=default": "random",
		"side=consumer&token=true":    "provider's token",
		"token=abc":                   `"side"`,
	} {
		_, err := token.Builder{}.Build(spi.MustParse("airnode://h:1/s?" + q))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", q, err, want)
		}
	}
}

func TestProviderChecksToken(t *testing.T) {
	f := build(t, "side=provider&token=s3cret")
	var seen map[string]string
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		seen = inv.Attachments
		return spi.Result{Value: "ok"}
	})
	call := func(att map[string]string) spi.Result {
		return f.Invoke(context.Background(), next, &spi.Invocation{Service: "demo.Echo", Method: "Echo", Attachments: att})
	}
	if res := call(map[string]string{"token": "s3cret", "remote": "127.0.0.1:5"}); res.Err != nil || res.Value != "ok" {
		t.Fatalf("right token: %+v", res)
	}
	if _, leaked := seen["token"]; leaked {
		t.Error("the service saw the token attachment")
	}
	for att, want := range map[*map[string]string]string{
		{"token": "s3creT", "remote": "127.0.0.1:5"}: "token: wrong token for demo.Echo.Echo from 127.0.0.1:5: refused, it is not the provider's token; the method did not run",
		{"remote": "127.0.0.1:6"}:                    "token: missing token for demo.Echo.Echo from 127.0.0.1:6: refused, the provider requires one (URL key token); the method did not run",
		nil:                                          "token: missing token for demo.Echo.Echo from unknown address: refused, the provider requires one (URL key token); the method did not run",
	} {
		var m map[string]string
		if att != nil {
			m = *att
		}
		res := call(m)
		var e *spi.Error
		if !errors.As(res.Err, &e) || e.Status != spi.StatusBadRequest || e.Message != want {
			t.Errorf("got %v, want BAD_REQUEST %q", res.Err, want)
		}
		if !errors.Is(res.Err, spi.ErrAccessDenied) {
			t.Errorf("%v: its Cause is not spi.ErrAccessDenied (the metrics filter counts it as a failure of the method)", res.Err)
		}
		if strings.Contains(res.Err.Error(), "s3cre") {
			t.Errorf("error leaks a token: %v", res.Err)
		}
	}
	if f.Rejected() != 3 {
		t.Errorf("Rejected = %d, want 3", f.Rejected())
	}
}

func TestConsumerSendsToken(t *testing.T) {
	f := build(t, "side=consumer&token=abc")
	var got string
	next := spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), func(ctx context.Context, inv *spi.Invocation) spi.Result {
		got = inv.Attachment("token")
		return spi.Result{}
	})
	f.Invoke(context.Background(), next, &spi.Invocation{Service: "s", Method: "M"})
	if got != "abc" {
		t.Errorf("sent %q", got)
	}
	inv := &spi.Invocation{Service: "s", Method: "M"}
	inv.SetAttachment("token", "mine")
	f.Invoke(context.Background(), next, inv)
	if got != "mine" {
		t.Errorf("caller's token replaced: %q", got)
	}
}

func TestFalseIsOff(t *testing.T) {
	f := build(t, "side=provider&token=false")
	if res := f.Invoke(context.Background(), spitest.NewStubInvoker(spi.MustParse("airnode://h:1/s"), nil), &spi.Invocation{Service: "s", Method: "M"}); res.Err != nil {
		t.Fatal(res.Err)
	}
}

func TestIsRandom(t *testing.T) {
	if !token.IsRandom("true") || !token.IsRandom("default") || token.IsRandom("x") {
		t.Error("IsRandom")
	}
}

// U2: "?token=" is the key present with an empty value, not token=token: a
// provider export with it fails loudly instead of accepting every call or
// the literal "token".
func TestU2_EmptyTokenIsPresentAndRefused(t *testing.T) {
	u := spi.MustParse("airnode://h:1/s?side=provider&token=")
	if v, ok := u.Param("token"); !ok || v != "" {
		t.Fatalf("token = %q, %v", v, ok)
	}
	if _, err := (token.Builder{}).Build(u); err == nil || !strings.Contains(err.Error(), `"token" is empty`) {
		t.Errorf("err = %v", err)
	}
}
