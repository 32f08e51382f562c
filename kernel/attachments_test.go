package kernel

import (
	"context"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/extension"
	"github.com/airnode/airnode/spi"
)

// whoService returns the attachments its method sees; Later's goroutine
// reads them again after the call returned (the method may keep its
// context).
type whoService struct{ later chan map[string]string }

func (whoService) Who(ctx context.Context) (map[string]string, error) {
	return maps.Clone(spi.IncomingAttachments(ctx)), nil
}

func (w whoService) Later(ctx context.Context) error {
	go func() {
		time.Sleep(20 * time.Millisecond)
		w.later <- maps.Clone(spi.IncomingAttachments(ctx))
	}()
	return nil
}

// seenFilter records the attachment "tenant" each side's filter saw.
type seenFilter struct {
	mu   *sync.Mutex
	seen map[string]string // side -> tenant
}

func (seenFilter) Name() string { return "seen" }
func (seenFilter) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}}
}
func (f seenFilter) Build(u spi.URL) (spi.Filter, error) {
	side, _ := u.Param(spi.KeySide)
	return seenInvoke{f, side}, nil
}

type seenInvoke struct {
	f    seenFilter
	side string
}

func (s seenInvoke) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	s.f.mu.Lock()
	s.f.seen[s.side] = inv.Attachment("tenant")
	s.f.mu.Unlock()
	if s.side == "provider" {
		inv.SetAttachment("checked", "yes") // the method sees what provider filters add
	}
	return next.Invoke(ctx, inv)
}

// A Go consumer's spi.WithAttachments reach the filters of both sides and
// the provider's Go method (spi.IncomingAttachments), merged, with the
// consumer's address as "remote"; a key the kernel reserves is refused.
func TestAttachmentsFromGoConsumerToGoProvider(t *testing.T) {
	cat := testCatalogs(t)
	f := seenFilter{mu: new(sync.Mutex), seen: map[string]string{}}
	if err := cat.Filter.Register(f, extension.Bundled); err != nil {
		t.Fatal(err)
	}
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	svc := whoService{later: make(chan map[string]string, 1)}
	e, err := p.Export(ctxT(t), svc, spi.MustParse("airnode://127.0.0.1:0/test.Who"))
	if err != nil {
		t.Fatal(err)
	}
	c := NewNode(cat, WithLogger(quiet))
	defer c.Close()
	r, err := c.Refer(ctxT(t), spi.MustParse("airnode://"+e.URL().Address()+"/test.Who"), spi.URL{})
	if err != nil {
		t.Fatal(err)
	}

	ctx := spi.WithAttachments(ctxT(t), "tenant", "y", "user", "alice")
	ctx = spi.WithAttachments(ctx, "tenant", "x") // merged: a later value wins
	var got map[string]string
	if err := r.Call(ctx, "Who", nil, &got); err != nil {
		t.Fatal(err)
	}
	if got["tenant"] != "x" || got["user"] != "alice" || got["checked"] != "yes" || !strings.HasPrefix(got[spi.AttachmentRemote], "127.0.0.1:") {
		t.Fatalf("provider method saw %v; want tenant=x user=alice, the filter's checked=yes and remote", got)
	}
	f.mu.Lock()
	if f.seen["consumer"] != "x" || f.seen["provider"] != "x" {
		t.Errorf("filters saw tenant %v; want x on both sides", f.seen)
	}
	f.mu.Unlock()

	// without attachments: only the consumer's address
	got = nil
	if err := r.Call(ctxT(t), "Who", nil, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[spi.AttachmentRemote] == "" || got["checked"] != "yes" {
		t.Fatalf("no attachments sent, method saw %v; want remote and the filter's checked=yes", got)
	}
	// read after the call returned, while other calls run (-race: the
	// pooled map of a call without attachments is not shared)
	for range 2 {
		if err := r.Call(ctxT(t), "Later", nil, nil); err != nil {
			t.Fatal(err)
		}
		for range 20 {
			if err := r.Call(ctxT(t), "Who", nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case got := <-svc.later:
			if got[spi.AttachmentRemote] == "" {
				t.Fatalf("read after the call: %v; want remote", got)
			}
		case <-ctxT(t).Done():
			t.Fatal("Later's goroutine did not report")
		}
	}

	// reserved keys are refused before anything is sent, in any case
	// (tester10: "Remote" and "TIMEOUT" were accepted and delivered);
	// "timeout" is the call's timeout (TestTimeoutAttachment)
	for _, k := range []string{"token", "remote", "Remote", "Token"} {
		_, err := r.Invoke(spi.WithAttachments(ctxT(t), "tenant", "x", k, "v"), "Who")
		if spi.StatusOf(err) != spi.StatusClientError || !strings.Contains(err.Error(), `attachment "`+k+`" is reserved by the kernel`) {
			t.Errorf("attachment %s: %v; want CLIENT_ERROR naming it reserved", k, err)
		}
	}
}
