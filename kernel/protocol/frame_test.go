package protocol

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

func TestHeaderRoundTrip(t *testing.T) {
	h := Header{Flags: FlagRequest | FlagTwoWay | 2, Status: spi.StatusOK, ID: 0x0102030405060708, Length: 300}
	b := h.Append(nil)
	want := []byte{0xA1, 0x7E, 0xC2, 20, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 1, 44}
	if !bytes.Equal(b, want) {
		t.Fatalf("encoded % x, want % x", b, want)
	}
	got, err := DecodeHeader(b, 0)
	if err != nil || got != h {
		t.Fatalf("decoded %+v, %v; want %+v", got, err, h)
	}
	if !got.IsRequest() || !got.TwoWay() || got.IsEvent() || got.CodecID() != 2 {
		t.Fatalf("flag accessors wrong for %+v", got)
	}
}

func TestDecodeHeaderErrors(t *testing.T) {
	good := Header{Flags: FlagEvent, ID: 1, Length: 10}.Append(nil)
	bad := append([]byte{}, good...)
	bad[0] = 'G'
	big := Header{Length: 9 << 20}.Append(nil)
	cases := []struct {
		name string
		b    []byte
		want error
		text string
	}{
		{"truncated", good[:7], ErrTruncated, "header needs 16 bytes, got 7"},
		{"bad magic", bad, ErrBadMagic, "bad magic 0x477e"},
		{"over payload", big, ErrTooLarge, "body 9437184 bytes exceeds payload limit 8 MiB"},
	}
	for _, tc := range cases {
		_, err := DecodeHeader(tc.b, 0)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) || !strings.HasPrefix(err.Error(), "protocol: ") {
			t.Errorf("%s: err %v, want %v containing %q", tc.name, err, tc.want, tc.text)
		}
	}
	if _, err := DecodeHeader(big, 10<<20); err != nil {
		t.Errorf("payload 10 MiB rejected 9 MiB body: %v", err)
	}
}

func TestDecodeFrame(t *testing.T) {
	b := Header{Flags: FlagRequest | 1, ID: 7, Length: 3}.Append(nil)
	b = append(b, "abcrest"...)
	h, body, n, err := DecodeFrame(b, 0)
	if err != nil || h.ID != 7 || string(body) != "abc" || n != 19 {
		t.Fatalf("got %+v %q %d %v", h, body, n, err)
	}
	if _, _, _, err := DecodeFrame(b[:18], 0); !errors.Is(err, ErrTruncated) {
		t.Fatalf("short body: %v, want ErrTruncated", err)
	}
}

func TestReadHeader(t *testing.T) {
	var buf [HeaderLen]byte
	if _, err := ReadHeader(bytes.NewReader(nil), &buf, 0); err != io.EOF {
		t.Fatalf("empty stream: %v, want io.EOF", err)
	}
	if _, err := ReadHeader(bytes.NewReader([]byte{0xA1, 0x7E, 0}), &buf, 0); !errors.Is(err, ErrTruncated) {
		t.Fatalf("partial header: %v, want ErrTruncated", err)
	}
	h := Header{Flags: FlagEvent, ID: 9}
	got, err := ReadHeader(bytes.NewReader(h.Append(nil)), &buf, 0)
	if err != nil || got != h {
		t.Fatalf("got %+v %v", got, err)
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{8 << 20: "8 MiB", 64 << 10: "64 KiB", 1000: "1000 bytes", 0: "0 bytes"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzDecodeFrame checks that DecodeFrame never panics, never returns a body
// over the limit or outside b, and that a decoded header re-encodes to the
// same bytes.
func FuzzDecodeFrame(f *testing.F) {
	f.Add(Header{Flags: FlagRequest | FlagTwoWay | 1, ID: 1, Length: 2}.Append(nil), int64(0))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), int64(0))
	f.Fuzz(func(t *testing.T, b []byte, payload int64) {
		h, body, n, err := DecodeFrame(b, payload)
		if err != nil {
			if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrBadMagic) && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		limit := payload
		if limit <= 0 {
			limit = DefaultPayload
		}
		if int64(len(body)) > limit || n > len(b) || n != HeaderLen+len(body) {
			t.Fatalf("body %d bytes, n %d, len(b) %d, limit %d", len(body), n, len(b), limit)
		}
		if !bytes.Equal(h.Append(nil), b[:HeaderLen]) {
			t.Fatalf("header %+v does not re-encode to % x", h, b[:HeaderLen])
		}
	})
}
