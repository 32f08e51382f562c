package kernel_test

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// countSvc counts its runs and sets or reads attachments by the count.
type countSvc struct{ runs *atomic.Int64 }

// pairs returns n key, value pairs, keys from+0 .. from+n-1.
func pairs(from, n int) []string {
	kv := make([]string, 0, 2*n)
	for i := range n {
		kv = append(kv, "k"+strconv.Itoa(from+i), "v")
	}
	return kv
}

// Set sets n keys in one call; more sets n keys in a second call, from 0
// again when overlap (keys set again count once). It returns the
// errors of the two calls.
func (s countSvc) Set(ctx context.Context, n, more int, overlap bool) ([]string, error) {
	s.runs.Add(1)
	var errs []string
	if err := spi.SetResponseAttachments(ctx, pairs(0, n)...); err != nil {
		errs = append(errs, err.Error())
	}
	from := n
	if overlap {
		from = 0
	}
	if more > 0 {
		if err := spi.SetResponseAttachments(ctx, pairs(from, more)...); err != nil {
			errs = append(errs, err.Error())
		}
	}
	return errs, nil
}

// Count returns how many attachments the method received, "remote" aside.
func (s countSvc) Count(ctx context.Context) (int, error) {
	s.runs.Add(1)
	n := 0
	for k := range spi.IncomingAttachments(ctx) {
		if k != spi.AttachmentRemote {
			n++
		}
	}
	return n, nil
}

func (s countSvc) Add(a, b int) (int, error) { s.runs.Add(1); return a + b, nil }

// A provider method's spi.SetResponseAttachments refuses keys that would
// take its answer over the 4096 attachments a consumer decodes (new-user
// report 60, finding 1: the method ran and its result was lost to a
// BAD_RESPONSE), setting none of them; at 4096 the answer arrives whole.
func TestSetResponseAttachmentsRefusesOverTheCount(t *testing.T) {
	runs := new(atomic.Int64)
	ref := exportAndRefer(t, countSvc{runs}, "test.Count", "transport=tcp", "transport=tcp&timeout=10s")
	ctx := context.Background()
	const limit = protocol.MaxAttachments
	for _, c := range []struct {
		name       string
		n, more    int
		overlap    bool
		received   int
		refusedMsg string
	}{
		{"4096 in one set", limit, 0, false, limit, ""},
		{"4000 then 96", 4000, 96, false, limit, ""},
		{"4096 then the same 4096 again", limit, limit, true, limit, ""},
		{"10000 in one set", 10_000, 0, false, 0,
			"spi: SetResponseAttachments: the answer would carry 10000 attachments, over the 4096 a consumer accepts (a fixed limit of the wire format, docs/wire.md); none of the keys given was set"},
		{"4096 then 1 more", limit, 1, false, limit,
			"spi: SetResponseAttachments: the answer would carry 4097 attachments, over the 4096 a consumer accepts (a fixed limit of the wire format, docs/wire.md); none of the keys given was set"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var back map[string]string
			var errs []string
			if err := ref.Call(spi.ReceiveAttachments(ctx, &back), "Set", []any{c.n, c.more, c.overlap}, &errs); err != nil {
				t.Fatalf("the call failed: %v", err)
			}
			if len(back) != c.received {
				t.Errorf("received %d attachments; want %d", len(back), c.received)
			}
			switch {
			case c.refusedMsg == "" && len(errs) != 0:
				t.Errorf("refused: %q", errs)
			case c.refusedMsg != "" && (len(errs) != 1 || errs[0] != c.refusedMsg):
				t.Errorf("the method's errors %q\nwant [%q]", errs, c.refusedMsg)
			}
		})
	}
}

// A consumer refuses a call whose spi.WithAttachments come to more than
// the 4096 a provider decodes before sending it (it used to be sent and
// answered BAD_REQUEST): SERIALIZATION_ERROR, as a request over the
// payload limit, and the method does not run; at 4096 it runs with all
// of them.
func TestWithAttachmentsOverTheCountIsNotSent(t *testing.T) {
	runs := new(atomic.Int64)
	ref := exportAndRefer(t, countSvc{runs}, "test.Count", "transport=tcp", "transport=tcp&timeout=10s")
	ctx := context.Background()

	var n int
	if err := ref.Call(spi.WithAttachments(ctx, pairs(0, protocol.MaxAttachments)...), "Count", nil, &n); err != nil || n != protocol.MaxAttachments {
		t.Fatalf("Count with 4096 attachments = %d, %v; want 4096, nil", n, err)
	}
	before := runs.Load()
	err := ref.Call(spi.WithAttachments(ctx, pairs(0, 10_000)...), "Count", nil, &n)
	var e *spi.Error
	if !errors.As(err, &e) || e.Status != spi.StatusSerializationError ||
		e.Message != "exchange: call test.Count.Count: request carries 10000 attachments, over the 4096 a provider accepts (a fixed limit of the wire format, docs/wire.md); not sent" {
		t.Fatalf("Count with 10000 attachments: %v; want SERIALIZATION_ERROR saying not sent", err)
	}
	if got := runs.Load(); got != before {
		t.Fatalf("the method ran %d more times; want 0", got-before)
	}
}
