package kernel

import (
	"context"
	"testing"
)

// A provider filter's Result.Attachments win over the method's on the
// same key, and the filter's map is not modified.
func TestResponseAttachmentsFilterWins(t *testing.T) {
	c := &callCtx{Context: context.Background()}
	if err := c.SetResponseAttachments([]string{"k", "method"}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetResponseAttachments([]string{"m", "only-method"}); err != nil {
		t.Fatal(err)
	}
	filters := map[string]string{"k": "filter", "f": "only-filter"}
	got := c.responseAttachments(filters)
	if got["k"] != "filter" || got["m"] != "only-method" || got["f"] != "only-filter" || len(got) != 3 {
		t.Fatalf("merged %v", got)
	}
	if len(filters) != 2 {
		t.Fatalf("the filter's map was modified: %v", filters)
	}
	if err := c.SetResponseAttachments([]string{"late", "x"}); err != errResponseSent {
		t.Fatalf("a set after the answer: %v; want errResponseSent", err)
	}
	// none set: the filter's map itself, and later sets fail too
	c2 := &callCtx{Context: context.Background()}
	if got := c2.responseAttachments(filters); len(got) != 2 {
		t.Fatalf("no method attachments: got %v", got)
	}
	if err := c2.SetResponseAttachments([]string{"late", "x"}); err != errResponseSent {
		t.Fatalf("a set after an answer with none: %v; want errResponseSent", err)
	}
}
