package spi_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/airnode/airnode/spi"
)

func TestStatusNames(t *testing.T) {
	want := map[spi.Status]string{
		20: "OK", 25: "SERIALIZATION_ERROR", 30: "CLIENT_TIMEOUT", 31: "SERVER_TIMEOUT",
		35: "CHANNEL_INACTIVE", 40: "BAD_REQUEST", 50: "BAD_RESPONSE", 60: "SERVICE_NOT_FOUND",
		70: "SERVICE_ERROR", 80: "SERVER_ERROR", 90: "CLIENT_ERROR", 100: "SERVER_THREADPOOL_EXHAUSTED",
	}
	for s, name := range want {
		if s.String() != name || !s.Known() {
			t.Errorf("Status(%d) = %q known=%v, want %q", uint8(s), s.String(), s.Known(), name)
		}
		if back, ok := spi.ParseStatus(name); !ok || back != s {
			t.Errorf("ParseStatus(%q) = %d, %v", name, back, ok)
		}
	}
	if s := spi.Status(7); s.String() != "STATUS_7" || s.Known() {
		t.Errorf("Status(7) = %q known=%v", s, s.Known())
	}
	if _, ok := spi.ParseStatus("NOPE"); ok {
		t.Error("ParseStatus(NOPE) succeeded")
	}
}

func TestStatusErrorMatching(t *testing.T) {
	cause := context.DeadlineExceeded
	err := fmt.Errorf("consumer: call demo.Echo/Echo: %w",
		spi.Errorf(spi.StatusServerTimeout, "no answer from %s within %s: %w", "10.0.0.1:20880", "1s", cause))

	if !errors.Is(err, spi.ErrServerTimeout) {
		t.Fatal("errors.Is(err, ErrServerTimeout) = false")
	}
	if errors.Is(err, spi.ErrClientTimeout) {
		t.Fatal("errors.Is(err, ErrClientTimeout) = true for a SERVER_TIMEOUT")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("cause lost: errors.Is(err, DeadlineExceeded) = false")
	}
	var e *spi.Error
	if !errors.As(err, &e) || e.Status != spi.StatusServerTimeout {
		t.Fatalf("errors.As: %v", e)
	}
	if got := e.Error(); got != "SERVER_TIMEOUT: no answer from 10.0.0.1:20880 within 1s: context deadline exceeded" {
		t.Fatalf("Error() = %q", got)
	}
	// Two *Errors with messages are not each other's sentinels.
	a := &spi.Error{Status: spi.StatusServerError, Message: "a"}
	if errors.Is(a, &spi.Error{Status: spi.StatusServerError, Message: "b"}) {
		t.Fatal("message-bearing *Error matched as a sentinel")
	}
	if got := (&spi.Error{Status: spi.StatusBadRequest}).Error(); got != "BAD_REQUEST" {
		t.Fatalf("bare Error() = %q", got)
	}
}

func TestStatusOf(t *testing.T) {
	tests := []struct {
		err  error
		want spi.Status
	}{
		{nil, spi.StatusOK},
		{errors.New("plain"), spi.StatusClientError},
		{spi.ErrServiceNotFound, spi.StatusServiceNotFound},
		{fmt.Errorf("wrapped: %w", spi.Errorf(spi.StatusServerThreadpoolExhausted, "busy")), spi.StatusServerThreadpoolExhausted},
		{errors.Join(errors.New("x"), spi.ErrChannelInactive), spi.StatusChannelInactive},
	}
	for _, tt := range tests {
		if got := spi.StatusOf(tt.err); got != tt.want {
			t.Errorf("StatusOf(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// FromError: an *Error as it is; a wrapper of one, its status and
// Provider with the wrapper's text, the status once, errors.Is and
// errors.As as on the wrapper; no *Error, nil and false (gRPC's
// status.FromError since grpc-go 1.55).
func TestFromErrorTakesTheWrappedStatusAndTheWrappersText(t *testing.T) {
	inner := &spi.Error{Status: spi.StatusBadRequest, Message: "no tenant", Cause: spi.ErrAccessDenied, Provider: "10.0.0.1:20880"}
	if e, ok := spi.FromError(inner); !ok || e != inner {
		t.Fatalf("an *Error: %v %v, want itself", e, ok)
	}
	for _, tc := range []struct {
		err  error
		text string
	}{
		{fmt.Errorf("auth: %w", inner), "BAD_REQUEST: auth: no tenant"},
		{fmt.Errorf("gate: %w", fmt.Errorf("auth: %w", inner)), "BAD_REQUEST: gate: auth: no tenant"},
		{fmt.Errorf("auth: %w", spi.ErrBadRequest), "BAD_REQUEST: auth"},
	} {
		e, ok := spi.FromError(tc.err)
		if !ok || e.Status != spi.StatusBadRequest || e.Error() != tc.text || e.Cause != tc.err {
			t.Errorf("%v: %v %v, want %q with the wrapper as its Cause", tc.err, e, ok, tc.text)
			continue
		}
		if !errors.Is(e, spi.ErrBadRequest) {
			t.Errorf("%v: errors.Is(ErrBadRequest) false", tc.err)
		}
	}
	e, _ := spi.FromError(fmt.Errorf("auth: %w", inner))
	if !errors.Is(e, spi.ErrAccessDenied) || e.Provider != inner.Provider {
		t.Errorf("wrapper: %+v, want ErrAccessDenied matched and provider %s", e, inner.Provider)
	}
	for _, err := range []error{nil, errors.New("plain"), fmt.Errorf("x: %w", (*spi.Error)(nil))} {
		if e, ok := spi.FromError(err); ok || e != nil {
			t.Errorf("%v: %v %v, want nil false", err, e, ok)
		}
	}
}

// fix-di #1: a wrapper of a bare status sentinel says the status once,
// with the wrapper's text: fmt.Errorf("auth: %w", spi.ErrBadRequest)
// read "BAD_REQUEST: auth: BAD_REQUEST". The sentinel's name is left out
// with the ": " that joins it; a name inside a word or joined otherwise
// stays.
func TestFromErrorOfAWrappedBareStatusSaysItOnce(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("auth: %w", spi.ErrBadRequest), "BAD_REQUEST: auth"},
		{fmt.Errorf("gate: %w", fmt.Errorf("auth: %w", spi.ErrBadRequest)), "BAD_REQUEST: gate: auth"},
		{fmt.Errorf("auth: %w: tenant t1", spi.ErrBadRequest), "BAD_REQUEST: auth: tenant t1"},
		{fmt.Errorf("%w: tenant t1", spi.ErrBadRequest), "BAD_REQUEST: tenant t1"},
		{fmt.Errorf("%w", spi.ErrBadRequest), "BAD_REQUEST"},
		{fmt.Errorf("BAD_REQUEST seen: %w", spi.ErrBadRequest), "BAD_REQUEST: BAD_REQUEST seen"},
		{fmt.Errorf("auth (%w)", spi.ErrBadRequest), "BAD_REQUEST: auth (BAD_REQUEST)"},
		{fmt.Errorf("auth: %w", spi.ErrServerThreadpoolExhausted), "SERVER_THREADPOOL_EXHAUSTED: auth"},
	} {
		e, ok := spi.FromError(tc.err)
		if !ok || e.Error() != tc.want || !errors.Is(e, tc.err) {
			t.Errorf("FromError(%q) = %v, %v; want %q, matching the wrapper", tc.err, e, ok, tc.want)
		}
	}
	if got := spi.Errorf(spi.StatusBadRequest, "place: %w", spi.ErrBadRequest).Error(); got != "BAD_REQUEST: place" {
		t.Errorf("Errorf(BAD_REQUEST, \"place: %%w\", ErrBadRequest) = %q, want %q", got, "BAD_REQUEST: place")
	}
}
