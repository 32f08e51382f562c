package kernel

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// rawCall sends one json-codec request for method Who of service key
// key with att, as a
// consumer that is not airnode's writes it (docs/wire.md: the first
// ping, then the request on a plain tcp connection), and returns the
// attachments the method saw, or the error message of a failed call.
func rawCall(t *testing.T, addr, key string, att map[string]string) (map[string]string, spi.Status, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	ping := protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: 1}.Append(nil)
	body := protocol.AppendRequestPreamble(nil, key, "Who", 5000, att, 0)
	req := protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 2, ID: 2, Length: uint32(len(body))}.Append(nil)
	if _, err := c.Write(append(append(ping, req...), body...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var hb [protocol.HeaderLen]byte
	for {
		h, err := protocol.ReadHeader(br, &hb, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := make([]byte, h.Length)
		if _, err := io.ReadFull(br, b); err != nil {
			t.Fatal(err)
		}
		if h.IsEvent() || h.ID != 2 {
			continue // the ping's answer
		}
		_, rest, err := protocol.ParseAttachments(b)
		if err != nil {
			t.Fatal(err)
		}
		if h.Status != spi.StatusOK {
			msg, _, _ := protocol.ParseString(rest)
			return nil, h.Status, string(msg)
		}
		var seen map[string]string
		if err := json.Unmarshal(rest, &seen); err != nil {
			t.Fatalf("result %q: %v", rest, err)
		}
		return seen, h.Status, ""
	}
}

// A consumer that is not airnode's writes whatever attachments it likes
// in a raw frame. The keys the kernel reserves (remote, timeout, token,
// in any case) never reach the method: "remote" is the real peer's
// address, the others are dropped; "token" reaches the token filter only
// (tester17 finding 9).
func TestAttachReservedKeysFromARawConsumerAreDropped(t *testing.T) {
	cat := testCatalogs(t)
	p := NewNode(cat, WithLogger(quiet), WithShutdownWait(0))
	defer p.Close()
	svc := whoService{later: make(chan map[string]string, 1)}
	open, err := p.Export(ctxT(t), svc, spi.MustParse("airnode://127.0.0.1:0/test.Who?transport=tcp"))
	if err != nil {
		t.Fatal(err)
	}
	locked, err := p.Export(ctxT(t), svc, spi.MustParse("airnode://127.0.0.1:0/test.Who?transport=tcp&group=g&token=s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	forged := map[string]string{"timeout": "1", "Timeout": "2", "Remote": "6.6.6.6:1", "remote": "6.6.6.6:2",
		"TOKEN": "x", "token": "s3cret", "tenant": "acme"}

	seen, st, msg := rawCall(t, open.URL().Address(), "test.Who", forged)
	if st != spi.StatusOK {
		t.Fatalf("call answered %v %s", st, msg)
	}
	checkSeen(t, "no token on the provider", seen)

	// The locked export is g/test.Who: the service key goes in the preamble.
	seen, st, msg = rawCall(t, locked.URL().Address(), "g/test.Who", forged)
	if st != spi.StatusOK {
		t.Fatalf("call with the right token answered %v %s", st, msg)
	}
	checkSeen(t, "token=s3cret on the provider", seen)

	wrong := map[string]string{"token": "nope", "TOKEN": "s3cret"}
	if _, st, msg = rawCall(t, locked.URL().Address(), "g/test.Who", wrong); st != spi.StatusBadRequest {
		t.Fatalf("a wrong token (and the right one under TOKEN) answered %v %q; want BAD_REQUEST", st, msg)
	}
}

// checkSeen fails unless seen, the attachments a method saw, are the
// consumer's own key and "remote" = a loopback address of the test.
func checkSeen(t *testing.T, what string, seen map[string]string) {
	t.Helper()
	if seen["tenant"] != "acme" {
		t.Errorf("%s: tenant %q lost: %v", what, seen["tenant"], seen)
	}
	if host, _, err := net.SplitHostPort(seen["remote"]); err != nil || host != "127.0.0.1" {
		t.Errorf("%s: remote = %q, want this test's address", what, seen["remote"])
	}
	for k := range seen {
		if k != "tenant" && k != "remote" {
			t.Errorf("%s: the method saw reserved key %q = %q (all: %v)", what, k, seen[k], seen)
		}
	}
}
