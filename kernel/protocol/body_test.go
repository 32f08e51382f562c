package protocol

import (
	"errors"
	"maps"
	"testing"
)

func TestRequestPreambleRoundTrip(t *testing.T) {
	for _, att := range []map[string]string{nil, {"token": "s3cret", "k": ""}} {
		b := AppendRequestPreamble([]byte("hdr"), "g/demo.Echo:1.0", "Echo", 1500, att, 2)
		b = append(b, "ARGS"...)
		p, rest, err := ParseRequestPreamble(b[3:])
		if err != nil {
			t.Fatal(err)
		}
		if string(p.Service) != "g/demo.Echo:1.0" || string(p.Method) != "Echo" || p.TimeoutMS != 1500 || p.NumArgs != 2 || string(rest) != "ARGS" {
			t.Fatalf("got %q %q %d %d rest %q", p.Service, p.Method, p.TimeoutMS, p.NumArgs, rest)
		}
		if p.NumAttachments() != len(att) || !maps.Equal(p.Attachments(), att) {
			t.Fatalf("attachments %v, want %v", p.Attachments(), att)
		}
		if att == nil && p.Attachments() != nil {
			t.Fatal("no attachments must give a nil map")
		}
	}
}

func TestResponsePreambleRoundTrip(t *testing.T) {
	b := AppendString(AppendAttachments(nil, map[string]string{"a": "1"}), "boom")
	att, rest, err := ParseAttachments(b)
	if err != nil || att["a"] != "1" || len(att) != 1 {
		t.Fatal(att, err)
	}
	msg, rest, err := ParseString(rest)
	if err != nil || string(msg) != "boom" || len(rest) != 0 {
		t.Fatal(msg, rest, err)
	}
}

func TestRequestPreambleErrors(t *testing.T) {
	good := AppendRequestPreamble(nil, "svc", "M", 0, map[string]string{"k": "v"}, 1)
	for name, body := range map[string][]byte{
		"empty":             nil,
		"service too long":  {0x7f, 's'},
		"varint overflow":   {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		"truncated":         good[:len(good)-1],
		"too many args":     AppendRequestPreamble(nil, "s", "m", 0, nil, MaxArgs+1),
		"too many attachm.": append(AppendString(AppendString(nil, "s"), "m"), 0, 0xff, 0xff, 0x01),
	} {
		if _, _, err := ParseRequestPreamble(body); !errors.Is(err, ErrBadBody) {
			t.Errorf("%s: err %v, want ErrBadBody", name, err)
		}
	}
}

func BenchmarkRequestPreamble(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 128)
	for b.Loop() {
		buf = AppendRequestPreamble(buf[:0], "demo.Echo", "Echo", 1000, nil, 1)
		if _, _, err := ParseRequestPreamble(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzRequestPreamble: any body parses to an error or a preamble, never a
// panic, and a parsed preamble's attachments can be read.
func FuzzRequestPreamble(f *testing.F) {
	f.Add(AppendRequestPreamble(nil, "demo.Echo", "Echo", 1000, map[string]string{"k": "v"}, 1))
	f.Add([]byte{0xff, 0x01})
	f.Fuzz(func(t *testing.T, in []byte) {
		p, rest, err := ParseRequestPreamble(in)
		if err != nil {
			return
		}
		if len(p.Attachments()) != p.NumAttachments() && p.NumAttachments() > 0 && len(p.Attachments()) == 0 {
			t.Fatal("attachments lost")
		}
		if len(rest) > len(in) {
			t.Fatal("rest longer than input")
		}
	})
}

// RequestTimeoutMS reads what ParseRequestPreamble reads as TimeoutMS,
// and 0 for a body cut before it.
func TestRequestTimeoutMSMatchesThePreamble(t *testing.T) {
	for _, ms := range []uint64{0, 1, 1000, 1 << 40} {
		b := AppendRequestPreamble(nil, "g/demo.Echo:1.0", "Echo", ms, map[string]string{"k": "v", "trace": "t-1"}, 2)
		p, _, err := ParseRequestPreamble(b)
		if err != nil {
			t.Fatal(err)
		}
		if got := RequestTimeoutMS(b); got != p.TimeoutMS || got != ms {
			t.Errorf("RequestTimeoutMS = %d; ParseRequestPreamble %d, written %d", got, p.TimeoutMS, ms)
		}
		for cut := range len("g/demo.Echo:1.0") + len("Echo") + 2 {
			if got := RequestTimeoutMS(b[:cut]); got != 0 {
				t.Errorf("a body cut at %d bytes: RequestTimeoutMS = %d, want 0", cut, got)
			}
		}
	}
}
