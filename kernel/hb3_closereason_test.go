package kernel

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/xtaci/smux"

	"github.com/airnode/airnode/kernel/protocol"
)

// rawWireFrame is one frame read by a hand-written client.
type rawWireFrame struct {
	h    protocol.Header
	body []byte
	at   time.Duration // since the request was written
}

// rawEchoRequest is a two-way json request for demo.Echo("hello") with id,
// as docs/wire.md writes it: no ping, no hello before it.
func rawEchoRequest(id uint64) []byte {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	body := str(nil, "demo.Echo")
	body = str(body, "Echo")
	body = binary.AppendUvarint(body, 10000) // timeout ms
	body = append(body, 0, 1)                // no attachments, 1 argument
	body = append(body, "\"hello\"\n"...)
	f := make([]byte, protocol.HeaderLen, protocol.HeaderLen+len(body))
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 2, ID: id, Length: uint32(len(body))}.Put(f)
	return append(f, body...)
}

// dialRawClient connects a hand-written client to addr over transport tcp
// (frames on the connection) or smux (frames on one stream of a v2
// session, keepalive off, as docs/wire.md says).
func dialRawClient(t *testing.T, addr, transport string) io.ReadWriter {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if transport == "tcp" {
		return conn
	}
	cfg := smux.DefaultConfig()
	cfg.Version = 2
	cfg.KeepAliveDisabled = true
	s, err := smux.Client(conn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st, err := s.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// readRawFrames reads frames from r until it ends or 15 s pass.
func readRawFrames(t *testing.T, r io.Reader, start time.Time) (frames []rawWireFrame, end error) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			var hb [protocol.HeaderLen]byte
			h, err := protocol.ReadHeader(r, &hb, 0)
			if err != nil {
				end = err
				return
			}
			body := make([]byte, h.Length)
			if _, err := io.ReadFull(r, body); err != nil {
				end = err
				return
			}
			frames = append(frames, rawWireFrame{h: h, body: body, at: time.Since(start)})
		}
	}()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("the provider did not close the idle connection in 15 s")
	}
	return frames, end
}

// hb3 finding 1: a consumer that sends no hello and no ping (a client
// written from docs/wire.md) and then stays idle has its connection closed
// by the idle provider after its heartbeat.timeout. It used to read only
// the end of the connection; the provider now sends the close-reason event
// first (flags 0xA0, body 'C' and the reason), naming the timeout and what
// the consumer must do, and logs the close at INFO with that reason. On
// both transports. A Go consumer (heartbeat=none, the one Go strategy an
// idle provider closes) adds the provider's reason to its own close line.
func TestNoHelloConsumerIdleCloseSaysWhy(t *testing.T) {
	for _, tr := range []string{"tcp", "smux"} {
		t.Run(tr, func(t *testing.T) {
			t.Parallel()
			plogs, _, r := loggedEchoPair(t, "transport="+tr+"&heartbeat.interval=500ms&heartbeat.timeout=1500ms", "transport="+tr+"&heartbeat=none")
			addr := r.URL().Address()
			rw := dialRawClient(t, addr, tr)
			start := time.Now()
			if _, err := rw.Write(rawEchoRequest(1)); err != nil {
				t.Fatal(err)
			}
			frames, end := readRawFrames(t, rw, start)
			t.Logf("read %d frames, then %v", len(frames), end)
			if len(frames) != 2 {
				t.Fatalf("read %d frames, want the response and the close-reason event: %+v", len(frames), frames)
			}
			if frames[0].h.ID != 1 || frames[0].h.Status != 20 || !bytes.Contains(frames[0].body, []byte(`"hello"`)) {
				t.Errorf("first frame is not the OK answer to request 1: %+v %q", frames[0].h, frames[0].body)
			}
			ev := frames[1]
			if ev.h.Flags != protocol.FlagRequest|protocol.FlagEvent || len(ev.body) < 2 || ev.body[0] != 'C' {
				t.Fatalf("second frame is not the close-reason event (flags 0xa0, body 'C'...): flags %#x body %q", ev.h.Flags, ev.body)
			}
			why := string(ev.body[1:])
			for _, want := range []string{"heartbeat idle: nothing read from or written to", "(heartbeat.timeout 1.5s)", "the consumer sent no ping and no hello", "must ping at least every 500ms"} {
				if !strings.Contains(why, want) {
					t.Errorf("close reason does not say %q: %s", want, why)
				}
			}
			if ev.at < 1400*time.Millisecond || ev.at > 5*time.Second {
				t.Errorf("closed %v after the request, want about heartbeat.timeout 1.5s", ev.at)
			}
			if end != io.EOF {
				t.Errorf("the connection ended with %v, want EOF after the event", end)
			}
			deadline := time.Now().Add(5 * time.Second)
			for !strings.Contains(plogs.String(), "sent no ping and no hello") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			for _, l := range strings.Split(plogs.String(), "\n") {
				if strings.Contains(l, "sent no ping and no hello") && !strings.Contains(l, `level=INFO msg="channel closed"`) {
					t.Errorf("provider's close is not at INFO: %s", l)
				}
			}
			if !strings.Contains(plogs.String(), "sent no ping and no hello") {
				t.Errorf("provider did not log the close with the reason:\n%s", plogs.String())
			}
		})
	}
}

// The same for a client that pinged once, without a hello, and then
// stopped: the provider says it stopped pinging (a WARN: it may be hung),
// with the same advice, and sends it too.
func TestNoHelloConsumerThatStoppedPingingIsTold(t *testing.T) {
	plogs, _, r := loggedEchoPair(t, "transport=tcp&heartbeat.interval=500ms&heartbeat.timeout=1500ms", "transport=tcp&heartbeat=none")
	rw := dialRawClient(t, r.URL().Address(), "tcp")
	start := time.Now()
	ping := make([]byte, protocol.HeaderLen)
	protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | protocol.FlagEvent, ID: 1}.Put(ping)
	if _, err := rw.Write(append(ping, rawEchoRequest(2)...)); err != nil {
		t.Fatal(err)
	}
	frames, _ := readRawFrames(t, rw, start)
	if len(frames) != 3 || len(frames[2].body) < 2 || frames[2].body[0] != 'C' {
		t.Fatalf("want the ping's answer, the response and the close-reason event, read %+v", frames)
	}
	why := string(frames[2].body[1:])
	if !strings.Contains(why, "the consumer sent no hello and stopped pinging") || !strings.Contains(why, "must ping at least every 500ms") {
		t.Errorf("close reason: %s", why)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(plogs.String(), "stopped pinging") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(plogs.String(), `level=WARN msg="channel closed"`) {
		t.Errorf("provider's close of a consumer that stopped pinging is not a WARN:\n%s", plogs.String())
	}
}
