package spitest_test

import (
	"context"
	"maps"
	"testing"

	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// traceBuilder's filter is a correct tracing filter (tester20 N5): it
// passes the call on with an "x-trace" attachment added, copying the
// caller's "trace" when it has one, on both sides. drop also removes the
// caller's "trace" (a bad filter: a change the option does not allow).
type traceBuilder struct{ drop bool }

func (traceBuilder) Name() string               { return "trace" }
func (traceBuilder) Activation() spi.Activation { return spi.Activation{} }
func (b traceBuilder) Build(spi.URL) (spi.Filter, error) {
	return traceFilter(b), nil
}

type traceFilter struct{ drop bool }

func (f traceFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	id := "T-new"
	if v, ok := inv.Attachments["trace"]; ok {
		id = v
	}
	att := maps.Clone(inv.Attachments)
	if att == nil {
		att = map[string]string{}
	}
	att["x-trace"] = id
	if f.drop {
		delete(att, "trace")
	}
	out := *inv
	out.Attachments = att
	return next.Invoke(ctx, &out)
}

// A tracing filter that adds the attachment it documents passes TestFilter
// once FilterOptions.AddsAttachments lists it.
func TestT20_5_TracingFilterPassesWithAddsAttachments(t *testing.T) {
	spitest.TestFilter(t, traceBuilder{}, spitest.FilterOptions{AddsAttachments: []string{"x-trace"}})
}

func TestChildT20TraceWithoutOption(t *testing.T) {
	child(t)
	spitest.TestFilter(t, traceBuilder{})
}

func TestChildT20TraceDrops(t *testing.T) {
	child(t)
	spitest.TestFilter(t, traceBuilder{drop: true}, spitest.FilterOptions{AddsAttachments: []string{"x-trace"}})
}

// Without the option the added attachment is still a change; with it, a
// filter that also removes an attachment the caller sent still fails,
// and the message names the allowed keys.
func TestT20_5_TracingFilterChangesStillCaught(t *testing.T) {
	out := runChild(t, "TestChildT20TraceWithoutOption")
	wantLines(t, out,
		"--- FAIL: TestChildT20TraceWithoutOption/consumer/PassThrough",
		"x-trace:T-1",
		"want it unchanged: ",
		"--- PASS: TestChildT20TraceWithoutOption/consumer/ErrorPropagated")
	out = runChild(t, "TestChildT20TraceDrops")
	wantLines(t, out,
		"--- FAIL: TestChildT20TraceDrops/provider/PassThrough",
		`want it unchanged but for the attachments ["x-trace"] (FilterOptions.AddsAttachments)`)
}
