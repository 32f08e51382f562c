package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"testing"
	"time"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// shopSvc fails with business errors (spi.BizError).
type shopSvc struct{}

func (shopSvc) Buy(ctx context.Context, sku string) (string, error) {
	if err := spi.SetResponseAttachments(ctx, "server-timing", "db;dur=1"); err != nil {
		return "", err
	}
	if sku == "A-1" {
		return "", spi.NewBizError(1001, "OUT_OF_STOCK", "sku A-1 is out of stock", map[string]string{"sku": "A-1", "warehouse": "east"})
	}
	return "bought " + sku, nil
}

// Place wraps the BizError to choose a status that passes through.
func (shopSvc) Place(ctx context.Context) error {
	return spi.Errorf(spi.StatusBadRequest, "place: %w", &spi.BizError{Reason: "BAD_SKU", Message: "bad sku"})
}

// Bare returns a BizError with a code only.
func (shopSvc) Bare(ctx context.Context) error { return &spi.BizError{Code: 7} }

// Forge tries to put a BizError's keys in its answer by hand.
func (shopSvc) Forge(ctx context.Context) (string, error) {
	err := spi.SetResponseAttachments(ctx, "biz.code", "9")
	if err == nil {
		return "", errors.New("biz.code was accepted")
	}
	return err.Error(), nil
}

// Plain returns an error that is no BizError.
func (shopSvc) Plain(ctx context.Context) error { return errors.New("plain failure") }

var bizQuiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestBizErrorReachesTheCaller: a provider method's *spi.BizError comes
// back to a Go consumer over real TCP, with both codecs and both
// transports, with its code, reason, message and details, under the
// status any method error gets; the method's own response attachments
// come without the BizError's keys, and a call that succeeds carries none.
func TestBizErrorReachesTheCaller(t *testing.T) {
	for i, tc := range []struct{ codec, transport string }{{"msgpack", "smux"}, {"json", "smux"}, {"msgpack", "tcp"}, {"json", "tcp"}} {
		t.Run(tc.codec+"/"+tc.transport, func(t *testing.T) {
			ctx := context.Background()
			provider := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(bizQuiet), kernel.WithShutdownWait(0))
			t.Cleanup(func() { provider.Close() })
			exp, err := provider.Export(ctx, shopSvc{}, spi.MustParse(fmt.Sprintf("airnode://127.0.0.1:%d/test.Shop?codec=%s&transport=%s", 28510+i, tc.codec, tc.transport)))
			if err != nil {
				t.Fatal(err)
			}
			consumer := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(bizQuiet))
			t.Cleanup(func() { consumer.Close() })
			ref, err := consumer.Refer(ctx, spi.MustParse(fmt.Sprintf("airnode://%s/test.Shop?codec=%s&transport=%s&timeout=5s", exp.URL().Address(), tc.codec, tc.transport)), spi.URL{})
			if err != nil {
				t.Fatal(err)
			}

			var got map[string]string
			var out string
			err = ref.Call(spi.ReceiveAttachments(ctx, &got), "Buy", []any{"A-1"}, &out)
			var be *spi.BizError
			if !errors.As(err, &be) {
				t.Fatalf("Buy(A-1) = %v (%T); want an error errors.As finds a *spi.BizError in", err, err)
			}
			want := spi.BizError{Code: 1001, Reason: "OUT_OF_STOCK", Message: "sku A-1 is out of stock", Details: map[string]string{"sku": "A-1", "warehouse": "east"}}
			if be.Code != want.Code || be.Reason != want.Reason || be.Message != want.Message || !maps.Equal(be.Details, want.Details) {
				t.Fatalf("BizError = %+v; want %+v", *be, want)
			}
			if s := spi.StatusOf(err); s != spi.StatusServiceError || err.Error() != "SERVICE_ERROR: sku A-1 is out of stock" {
				t.Fatalf("Buy(A-1): status %v, text %q; want SERVICE_ERROR, %q", s, err.Error(), "SERVICE_ERROR: sku A-1 is out of stock")
			}
			if len(got) != 1 || got["server-timing"] != "db;dur=1" {
				t.Fatalf("received attachments %v; want the method's server-timing only", got)
			}

			// Invoke, Bind stubs: the same
			if _, err := ref.Invoke(ctx, "Buy", "A-1"); !errors.As(err, &be) || be.Code != 1001 {
				t.Fatalf("Invoke(Buy, A-1) = %v; want the BizError 1001", err)
			}
			var stub struct {
				Buy func(context.Context, string) (string, error)
			}
			if err := ref.Bind(&stub); err != nil {
				t.Fatal(err)
			}
			if _, err := stub.Buy(ctx, "A-1"); !errors.As(err, &be) || be.Details["warehouse"] != "east" {
				t.Fatalf("stub Buy(A-1) = %v; want the BizError with its details", err)
			}

			// success: the method's attachments only
			got = nil
			if err := ref.Call(spi.ReceiveAttachments(ctx, &got), "Buy", []any{"B-2"}, &out); err != nil || out != "bought B-2" || len(got) != 1 {
				t.Fatalf("Buy(B-2) = %q, %v, received %v", out, err, got)
			}

			// wrapped in a status that passes through: that status, the
			// wrapping text on the wire, the BizError's own message kept
			err = ref.Call(ctx, "Place", nil, nil)
			if !errors.As(err, &be) || be.Reason != "BAD_SKU" || be.Message != "bad sku" || be.Code != 0 || be.Details != nil {
				t.Fatalf("Place = %v; want the BizError BAD_SKU %q", err, "bad sku")
			}
			if !errors.Is(err, spi.ErrBadRequest) || err.Error() != "BAD_REQUEST: place: bad sku" {
				t.Fatalf("Place = %q; want BAD_REQUEST: place: bad sku", err)
			}

			// a code alone: its text names it, the message stays empty
			err = ref.Call(ctx, "Bare", nil, nil)
			if !errors.As(err, &be) || be.Code != 7 || be.Message != "" || be.Error() != "business error 7" || err.Error() != "SERVICE_ERROR: business error 7" {
				t.Fatalf("Bare = %q (BizError %+v); want SERVICE_ERROR: business error 7, Code 7, Message empty", err, be)
			}

			// a plain error is no BizError, as before
			if err := ref.Call(ctx, "Plain", nil, nil); errors.As(err, &be) || err.Error() != "SERVICE_ERROR: plain failure" {
				t.Fatalf("Plain = %v; want SERVICE_ERROR: plain failure, no BizError", err)
			}

			// the biz. keys are the kernel's in an answer
			if err := ref.Call(ctx, "Forge", nil, &out); err != nil || out != `spi: SetResponseAttachments: key "biz.code": keys starting "biz." carry a BizError in an answer: return a *spi.BizError instead` {
				t.Fatalf("Forge = %q, %v", out, err)
			}
		})
	}
}

// TestBizErrorOldConsumerSeesTodaysAnswer reads, as a consumer older than
// BizError does (the response's attachments, then its message string), the
// answer a provider sends for a BizError: the status and message any
// method error gets, the BizError in attachments it ignores.
func TestBizErrorOldConsumerSeesTodaysAnswer(t *testing.T) {
	ctx := context.Background()
	provider := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(bizQuiet), kernel.WithShutdownWait(0))
	t.Cleanup(func() { provider.Close() })
	exp, err := provider.Export(ctx, shopSvc{}, spi.MustParse("airnode://127.0.0.1:0/test.Shop?codec=json&transport=tcp"))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", exp.URL().Address(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	for id, method := range map[uint64]string{1: "Buy", 2: "Plain"} {
		body := protocol.AppendRequestPreamble(nil, "test.Shop", method, 5000, nil, map[string]int{"Buy": 1}[method])
		if method == "Buy" {
			body = append(body, "\"A-1\"\n"...)
		}
		frame := protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 2, ID: id, Length: uint32(len(body))}.Append(nil)
		if _, err := conn.Write(append(frame, body...)); err != nil {
			t.Fatal(err)
		}
		var hb [protocol.HeaderLen]byte
		h, err := protocol.ReadHeader(conn, &hb, 0)
		if err != nil {
			t.Fatal(err)
		}
		resp := make([]byte, h.Length)
		if _, err := io.ReadFull(conn, resp); err != nil {
			t.Fatal(err)
		}
		att, rest, err := protocol.ParseAttachments(resp)
		if err != nil {
			t.Fatal(err)
		}
		msg, _, err := protocol.ParseString(rest)
		if err != nil {
			t.Fatal(err)
		}
		switch method {
		case "Buy":
			if h.Status != spi.StatusServiceError || string(msg) != "sku A-1 is out of stock" {
				t.Fatalf("old consumer read status %v message %q; want SERVICE_ERROR, the BizError's message", h.Status, msg)
			}
			want := map[string]string{"server-timing": "db;dur=1", "biz.code": "1001", "biz.reason": "OUT_OF_STOCK", "biz.detail.sku": "A-1", "biz.detail.warehouse": "east"}
			if !maps.Equal(att, want) {
				t.Fatalf("attachments %v; want %v", att, want)
			}
		case "Plain":
			if h.Status != spi.StatusServiceError || string(msg) != "plain failure" || att != nil {
				t.Fatalf("Plain: status %v message %q attachments %v; want SERVICE_ERROR, plain failure, none", h.Status, msg, att)
			}
		}
	}
}

// TestBizErrorFromAnotherProvider: a provider that knows nothing of
// BizError (an older airnode, or another language sending no biz. keys)
// gives a new consumer the error it gave before; one that sends the
// keys (docs/wire.md) gives a BizError, a malformed code kept as a detail.
func TestBizErrorFromAnotherProvider(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { l.Close(); <-done })
	go func() {
		defer close(done)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		for {
			var hb [protocol.HeaderLen]byte
			h, err := protocol.ReadHeader(c, &hb, 0)
			if err != nil {
				return
			}
			body := make([]byte, h.Length)
			if _, err := io.ReadFull(c, body); err != nil {
				return
			}
			if h.IsEvent() {
				if h.TwoWay() { // a ping: answered, no hello
					c.Write(protocol.Header{Flags: protocol.FlagEvent, Status: spi.StatusOK, ID: h.ID}.Append(nil))
				}
				continue
			}
			p, _, err := protocol.ParseRequestPreamble(body)
			if err != nil {
				return
			}
			var att map[string]string
			if string(p.Method) == "New" {
				att = map[string]string{"biz.code": "x12", "biz.reason": "QUOTA", "biz.detail.limit": "10", "biz.future": "f", "trace": "t1"}
			}
			resp := protocol.AppendString(protocol.AppendAttachments(nil, att), "quota exceeded")
			c.Write(append(protocol.Header{Flags: h.CodecID(), Status: spi.StatusServiceError, ID: h.ID, Length: uint32(len(resp))}.Append(nil), resp...))
		}
	}()

	ctx := context.Background()
	consumer := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(bizQuiet))
	t.Cleanup(func() { consumer.Close() })
	ref, err := consumer.Refer(ctx, spi.MustParse("airnode://"+l.Addr().String()+"/test.Quota?transport=tcp&codec=json&timeout=5s&retries=0"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}
	var be *spi.BizError
	var got map[string]string
	err = ref.Call(spi.ReceiveAttachments(ctx, &got), "Old", nil, nil)
	if err == nil || errors.As(err, &be) || err.Error() != "SERVICE_ERROR: quota exceeded" || got != nil {
		t.Fatalf("Old = %v, received %v; want SERVICE_ERROR: quota exceeded, no BizError, no attachments", err, got)
	}
	err = ref.Call(spi.ReceiveAttachments(ctx, &got), "New", nil, nil)
	if !errors.As(err, &be) || err.Error() != "SERVICE_ERROR: quota exceeded" {
		t.Fatalf("New = %v; want SERVICE_ERROR: quota exceeded with a BizError", err)
	}
	want := map[string]string{"limit": "10", "biz.code": "x12", "biz.future": "f"}
	if be.Code != 0 || be.Reason != "QUOTA" || be.Message != "quota exceeded" || !maps.Equal(be.Details, want) {
		t.Fatalf("BizError %+v; want code 0, reason QUOTA, message from the wire, details %v", *be, want)
	}
	if !maps.Equal(got, map[string]string{"trace": "t1"}) {
		t.Fatalf("received %v; want trace=t1 only", got)
	}
}
