package spi_test

import (
	"context"
	"testing"

	"github.com/airnode/airnode/spi"
)

func TestWithAttachmentsMergesAndKeepsTheParent(t *testing.T) {
	base := context.Background()
	if spi.OutgoingAttachments(base) != nil || spi.IncomingAttachments(base) != nil {
		t.Fatal("a bare context carries attachments")
	}
	a := spi.WithAttachments(base, "tenant", "x", "user", "alice")
	b := spi.WithAttachments(a, "tenant", "y", "trace", "t1")
	if got := spi.OutgoingAttachments(a); len(got) != 2 || got["tenant"] != "x" {
		t.Errorf("parent changed: %v", got)
	}
	if got := spi.OutgoingAttachments(b); len(got) != 3 || got["tenant"] != "y" || got["user"] != "alice" || got["trace"] != "t1" {
		t.Errorf("merged = %v", got)
	}
	// outgoing and incoming are separate: a provider's ctx does not forward
	in := spi.WithIncomingAttachments(base, map[string]string{"tenant": "z"})
	if spi.OutgoingAttachments(in) != nil || spi.IncomingAttachments(in)["tenant"] != "z" {
		t.Error("incoming attachments leak to the outgoing side")
	}
	defer func() {
		if recover() == nil {
			t.Error("an odd number of arguments did not panic")
		}
	}()
	spi.WithAttachments(base, "tenant")
}

func TestReservedAttachments(t *testing.T) {
	for _, k := range []string{spi.AttachmentToken, spi.AttachmentRemote, spi.AttachmentTimeout} {
		if !spi.ReservedAttachment(k) {
			t.Errorf("%s not reserved", k)
		}
	}
	for _, k := range []string{"Remote", "TIMEOUT", "Token", "rEmOtE"} {
		if !spi.ReservedAttachment(k) {
			t.Errorf("%s not reserved: the reserved check ignores case", k)
		}
	}
	if spi.ReservedAttachment("tenant") || spi.ReservedAttachment("remotes") || spi.ReservedAttachment("x-token") {
		t.Error("tenant reserved")
	}
	if got := spi.ReservedAttachments(); got != "remote, timeout, token" {
		t.Errorf("ReservedAttachments = %q", got)
	}
}
