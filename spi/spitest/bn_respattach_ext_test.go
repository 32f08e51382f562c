package spitest_test

import (
	"context"
	"maps"
	"testing"

	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// stampBuilder's filter returns next's result with the response
// attachment "x-stamp.<side>" added (tester88 #1: what sdk/README calls
// fine). value also replaces the result's value (a bad filter).
type stampBuilder struct{ value bool }

func (stampBuilder) Name() string { return "stamp" }
func (stampBuilder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}}
}
func (b stampBuilder) Build(u spi.URL) (spi.Filter, error) {
	return stampFilter{value: b.value, side: u.ParamOr("side", "?")}, nil
}

type stampFilter struct {
	value bool
	side  string
}

func (f stampFilter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	r := next.Invoke(ctx, inv)
	r.Attachments = maps.Clone(r.Attachments)
	if r.Attachments == nil {
		r.Attachments = map[string]string{}
	}
	r.Attachments["x-stamp."+f.side] = "s"
	if f.value && r.Err == nil {
		r.Value = "replaced"
	}
	return r
}

var stampAdds = spitest.FilterOptions{AddsResponseAttachments: []string{"x-stamp.consumer", "x-stamp.provider"}}

// A filter that adds the response attachments it declares passes.
func TestBN1_ResponseAttachmentsDeclaredPass(t *testing.T) {
	spitest.TestFilter(t, stampBuilder{}, stampAdds)
}

func TestChildBN1StampUndeclared(t *testing.T) {
	child(t)
	spitest.TestFilter(t, stampBuilder{}, spitest.FilterOptions{AddsAttachments: []string{"x-stamp.consumer", "x-stamp.provider"}})
}

func TestChildBN1StampReplacesValue(t *testing.T) {
	child(t)
	spitest.TestFilter(t, stampBuilder{value: true}, stampAdds)
}

// Undeclared (declared as invocation attachments, tester88's mistake),
// the added response attachment fails PassThrough, the message naming it
// and the option and flag that declare it; declared, a filter that also
// replaces the value still fails.
func TestBN1_ResponseAttachmentsUndeclaredOrValueFail(t *testing.T) {
	out := runChild(t, "TestChildBN1StampUndeclared")
	wantLines(t, out,
		"--- FAIL: TestChildBN1StampUndeclared/consumer/PassThrough",
		"--- FAIL: TestChildBN1StampUndeclared/provider/PassThrough",
		`it added "x-stamp.consumer"`,
		"FilterOptions.AddsResponseAttachments (airnode plugin check --filter-adds-response-attachment KEY)",
		"--filter-adds-attachment) declares the attachments of the invocation it passes to next, not of the result")
	out = runChild(t, "TestChildBN1StampReplacesValue")
	wantLines(t, out,
		"--- FAIL: TestChildBN1StampReplacesValue/consumer/PassThrough",
		`want next's result unchanged: value "pong", attachments map[k:v] but for the response attachments ["x-stamp.consumer" "x-stamp.provider"] (FilterOptions.AddsResponseAttachments)`)
}
