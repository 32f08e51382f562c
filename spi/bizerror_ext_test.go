package spi_test

import (
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/airnode/airnode/spi"
)

// A BizError survives AppendBizAttachments and BizErrorFromAttachments
// whole, beside the answer's other attachments; a stale biz. key is
// replaced; the limit keeps the first details in key order.
func TestBizErrorAttachmentsRoundTrip(t *testing.T) {
	be := spi.NewBizError(-3, "R", "wrapped msg", map[string]string{"a": "1", "b": "", "": "empty key"})
	att := spi.AppendBizAttachments(map[string]string{"trace": "t", "biz.stale": "x"}, be, "outer: wrapped msg", 100)
	want := map[string]string{"trace": "t", "biz.code": "-3", "biz.reason": "R", "biz.message": "wrapped msg", "biz.detail.a": "1", "biz.detail.b": "", "biz.detail.": "empty key"}
	if !maps.Equal(att, want) {
		t.Fatalf("attachments %v; want %v", att, want)
	}
	got, rest := spi.BizErrorFromAttachments(att, "outer: wrapped msg")
	if got.Code != -3 || got.Reason != "R" || got.Message != "wrapped msg" || !maps.Equal(got.Details, be.Details) || !maps.Equal(rest, map[string]string{"trace": "t"}) {
		t.Fatalf("got %+v, rest %v; want %+v, trace only", got, rest, be)
	}

	// the message equal to the response's is not sent again
	att = spi.AppendBizAttachments(nil, &spi.BizError{Message: "m"}, "m", 100)
	if !maps.Equal(att, map[string]string{"biz.code": "0"}) {
		t.Fatalf("attachments %v; want biz.code=0 only", att)
	}
	if got, rest := spi.BizErrorFromAttachments(att, "m"); got == nil || got.Message != "m" || got.Code != 0 || rest != nil {
		t.Fatalf("got %+v, rest %v", got, rest)
	}

	// at most limit attachments: the details in key order until then
	details := map[string]string{}
	for i := range 10 {
		details[fmt.Sprintf("k%d", i)] = "v"
	}
	att = spi.AppendBizAttachments(map[string]string{"x": "y"}, &spi.BizError{Code: 1, Details: details}, "", 5)
	if len(att) != 5 || att["biz.detail.k0"] != "v" || att["biz.detail.k2"] != "v" || att["biz.detail.k3"] != "" {
		t.Fatalf("attachments %v; want x, biz.code and details k0..k2", att)
	}

	// no biz. key: no BizError, att as it was
	plain := map[string]string{"trace": "t"}
	if got, rest := spi.BizErrorFromAttachments(plain, "m"); got != nil || !maps.Equal(rest, plain) {
		t.Fatalf("got %+v, rest %v; want nil, att", got, rest)
	}
}

// A BizError alone is SERVICE_ERROR with its message, and stays in the
// chain for errors.As; one wrapped in a passing status keeps that status.
func TestBizErrorMethodError(t *testing.T) {
	be := spi.NewBizError(1001, "OUT_OF_STOCK", "out of stock", nil)
	err := spi.MethodError("shop", "Buy", be)
	var got *spi.BizError
	if spi.StatusOf(err) != spi.StatusServiceError || err.Error() != "SERVICE_ERROR: out of stock" || !errors.As(err, &got) || got != be {
		t.Fatalf("MethodError = %v; want SERVICE_ERROR: out of stock with the BizError in its chain", err)
	}
	err = spi.MethodError("shop", "Buy", spi.Errorf(spi.StatusBadRequest, "buy: %w", be))
	if spi.StatusOf(err) != spi.StatusBadRequest || !errors.As(err, &got) {
		t.Fatalf("MethodError = %v; want BAD_REQUEST with the BizError", err)
	}
	if s := (&spi.BizError{Code: 4, Reason: "R"}).Error(); s != "business error 4 R" {
		t.Fatalf("Error() = %q", s)
	}
}

func ExampleBizError() {
	// in a provider method
	err := spi.MethodError("shop", "Buy", spi.NewBizError(1001, "OUT_OF_STOCK", "sku A-1 is out of stock", map[string]string{"sku": "A-1"}))
	// the consumer gets an error of that status, the BizError in its chain
	var be *spi.BizError
	if errors.As(err, &be) {
		fmt.Println(spi.StatusOf(err), be.Code, be.Reason, be.Details["sku"])
	}
	// Output: SERVICE_ERROR 1001 OUT_OF_STOCK A-1
}
