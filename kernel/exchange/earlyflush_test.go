package exchange

import (
	"bufio"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/protocol"
	"github.com/airnode/airnode/spi"
)

// With handlers on the reader (Options.Direct), a long read batch's
// responses go out every earlyFlushAfter requests instead of all at its
// end: a consumer gets the first ones while the reader still runs the
// rest. earlyFlushAfter+32 requests in one write, the first
// earlyFlushAfter answered at once and each of the other 32 sleeping 5 ms:
// the first answer arrives long before the batch's 160 ms are over.
func TestDirectBatchAnswersGoOutEarly(t *testing.T) {
	f := startServer(t, false, func(o *Options) { o.Direct = true })
	c := rawConn(t, f)
	br := bufio.NewReader(c)
	const quick, n, sleepMS = earlyFlushAfter, earlyFlushAfter + 32, 5
	var batch []byte
	for i := range n {
		ms := 0
		if i >= quick {
			ms = sleepMS
		}
		fb := getFrame()
		if err := encodeRequest(fb, mpCodec{}, echoInv("Sleep", ms), 0); err != nil {
			t.Fatal(err)
		}
		protocol.Header{Flags: protocol.FlagRequest | protocol.FlagTwoWay | 1, ID: uint64(i + 1), Length: uint32(len(fb.b) - protocol.HeaderLen)}.Put(fb.b)
		batch = append(batch, fb.b...)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	if _, err := c.Write(batch); err != nil {
		t.Fatal(err)
	}
	var first time.Duration
	for i := range n {
		h, _, err := readFrame(br)
		if err != nil || h.Status != spi.StatusOK {
			t.Fatalf("answer %d: %+v, %v", i, h, err)
		}
		if i == 0 {
			first = time.Since(start)
		}
	}
	all := time.Since(start)
	t.Logf("first answer after %v, all %d after %v", first, n, all)
	if batchTime := time.Duration(n-quick) * sleepMS * time.Millisecond; all < batchTime {
		t.Fatalf("all answers after %v, under the %v the handlers sleep: the batch did not run on the reader", all, batchTime)
	}
	if first > all/2 {
		t.Fatalf("first answer after %v of %v: held for the end of the read batch", first, all)
	}
}
