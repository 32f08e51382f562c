package pluginhost_test

import (
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/pluginhost"
)

// earlyRecord matches a record of plug3a's sdk.Logger() written before
// sdk.Serve, as the host logs it: its level and its n.
var earlyRecord = regexp.MustCompile(`level=(\w+) msg="early record"[^\n]* n=(\d+)`)

// A plugin whose sdk.Logger() writes 300,000 records before sdk.Serve
// starts about as fast as it writes them, and the host's log holds the
// first 100 and the last 100 of them, at their level (info), in order,
// with one line between saying how many were left out: the records
// written before the start's outcome are bounded as the raw lines are
// (fix-bm bounded only those: each record was logged as it came, 300,000
// of them, and under -race the plugin waited on its stderr pipe for 30 s
// where it wrote its records in 4 s).
func TestFixbxEarlyRecordFloodIsBounded(t *testing.T) {
	const n = 300000
	// how long the plugin takes to write them to a reader that keeps up
	// (hclog's JSON, alone about 1.5 s; 4 s on a loaded machine): run by
	// hand, without the host's magic cookie, it exits in sdk.Serve
	cmd := exec.Command(binary("plug3a"))
	cmd.Env = append(os.Environ(), "PLUG3A_RECORDS="+strconv.Itoa(n))
	cmd.Stderr = io.Discard
	began := time.Now()
	_ = cmd.Run()
	alone := time.Since(began)
	logger, logs := debugLogger()
	s := plug3aSpec(map[string]string{"PLUG3A_RECORDS": strconv.Itoa(n)})
	s.StartTimeout = 3*time.Second + 2*alone
	began = time.Now()
	h, _, err := startHostLogging(t, logger, s)
	if err != nil {
		t.Fatalf("a plugin logging %d records before sdk.Serve did not start within %v: %v", n, s.StartTimeout, err)
	}
	t.Logf("started in %v; the plugin alone wrote its records in %v", time.Since(began).Round(time.Millisecond), alone.Round(time.Millisecond))
	if i := info(t, h, "acme.plug3a"); i.State != pluginhost.StateRunning {
		t.Fatalf("state %+v", i)
	}
	text := logs.String()
	// the first 100 and the last 99: sdk.Serve's go-plugin logs "plugin
	// address" (debug) before the handshake, the last of the last 100
	// lines (TestPlug3aEarlyStderrKeepsItsOrder)
	got := earlyRecord.FindAllStringSubmatch(text, -1)
	if len(got) != 199 {
		t.Fatalf("%d early records logged; want the first 100 and the last 99", len(got))
	}
	for i, m := range got {
		want := i
		if i >= 100 {
			want = n - len(got) + i
		}
		if m[2] != strconv.Itoa(want) || m[1] != "INFO" {
			t.Fatalf("log record %d is early record %s at %s; want record %d at INFO", i, m[2], m[1], want)
		}
	}
	lo := leftOut.FindAllStringSubmatchIndex(text, -1)
	if len(lo) != 1 {
		t.Fatalf("%d lines say how many early lines were left out; want 1:\n%s", len(lo), text[:min(len(text), 4000)])
	}
	if sup := text[lo[0][4]:lo[0][5]]; sup != strconv.Itoa(n-len(got)) {
		t.Fatalf("suppressed=%s; want %d", sup, n-len(got))
	}
	first := earlyRecord.FindAllStringIndex(text, -1)
	if !(first[99][0] < lo[0][0] && lo[0][0] < first[100][0]) {
		t.Fatalf("the left-out line is not between record 99 and record %s:\n%s", got[100][2], text[:min(len(text), 4000)])
	}
}

// A plugin writing a few raw lines and then 10 records before sdk.Serve
// has every one of them logged once, in the order written, each record
// at its level with its pairs; nothing is said left out.
func TestFixbxFewEarlyRecordsAreAllLoggedInOrder(t *testing.T) {
	logger, logs := debugLogger()
	h, _, err := startHostLogging(t, logger, plug3aSpec(map[string]string{"PLUG3A_LINES": "3", "PLUG3A_RECORDS": "10"}))
	if err != nil {
		t.Fatal(err)
	}
	if i := info(t, h, "acme.plug3a"); i.State != pluginhost.StateRunning {
		t.Fatalf("state %+v", i)
	}
	text := logs.String()
	recs := earlyRecord.FindAllStringSubmatchIndex(text, -1)
	if len(recs) != 10 {
		t.Fatalf("%d early records logged; want 10:\n%s", len(recs), text)
	}
	for i, m := range recs {
		if lv, n := text[m[2]:m[3]], text[m[4]:m[5]]; lv != "INFO" || n != strconv.Itoa(i) {
			t.Fatalf("log record %d is early record %s at %s; want record %d at INFO:\n%s", i, n, lv, i, text)
		}
	}
	lines := earlyLine.FindAllStringIndex(text, -1)
	if len(lines) != 3 || lines[2][0] > recs[0][0] {
		t.Fatalf("want early lines 0-2, then the records:\n%s", text)
	}
	if leftOut.MatchString(text) {
		t.Fatalf("lines said left out:\n%s", text)
	}
}

// A plugin that logs many records, then a warning, and exits before
// sdk.Serve: the start error quotes the warning (noted when the record
// was held, not when it was logged), the log holds at most 200 of the
// records, at warn (a failed start), the warning last, and one line
// saying how many were left out.
func TestFixbxEarlyRecordFloodThenExitQuotesTheWarning(t *testing.T) {
	logger, logs := debugLogger()
	_, _, err := startHostLogging(t, logger, plug3aSpec(map[string]string{"PLUG3A_RECORDS": "5000",
		"PLUG3A_WARN": "settings file /etc/plug3a.yaml is missing", "PLUG3A_EXIT": "1"}))
	if err == nil || !strings.Contains(err.Error(), "exited with status 1 before the handshake") ||
		!strings.Contains(err.Error(), "settings file /etc/plug3a.yaml is missing") {
		t.Fatalf("err = %v; want the exit and the plugin's warning quoted", err)
	}
	text := logs.String()
	recs := earlyRecord.FindAllStringSubmatch(text, -1)
	if len(recs) != 199 { // the first 100, and the last 99 but the warning
		t.Fatalf("%d early records logged; want 199", len(recs))
	}
	for _, m := range recs {
		if m[1] != "WARN" {
			t.Fatalf("early record %s at %s; want WARN (a failed start)", m[2], m[1])
		}
	}
	w := strings.Index(text, `level=WARN msg="settings file /etc/plug3a.yaml is missing"`)
	if w < 0 || w < strings.LastIndex(text, `msg="early record"`) {
		t.Fatalf("want the warning after the last early record:\n%s", text[:min(len(text), 4000)])
	}
	if m := leftOut.FindAllStringSubmatch(text, -1); len(m) != 1 || m[0][1] != "WARN" || m[0][2] != strconv.Itoa(5001-200) {
		t.Fatalf("want one warning saying %d early lines were left out; got %v", 5001-200, m)
	}
}

// A plugin that logs many records and then panics before sdk.Serve: the
// start error still quotes the panic and where, and its stack is logged
// whole, at error, after the last records.
func TestFixbxEarlyRecordFloodThenPanicKeepsThePanic(t *testing.T) {
	logger, logs := debugLogger()
	_, _, err := startHostLogging(t, logger, plug3aSpec(map[string]string{"PLUG3A_RECORDS": "5000", "PLUG3A_PANIC": "1"}))
	if err == nil || !strings.Contains(err.Error(), `it panicked: "panic: assignment to entry in nil map" in main.main at `) {
		t.Fatalf("err = %v; want the panic quoted", err)
	}
	text := logs.String()
	p := strings.Index(text, `level=ERROR msg="panic: assignment to entry in nil map"`)
	if p < 0 || p < strings.LastIndex(text, `msg="early record"`) {
		t.Fatalf("want the last early records, then the panic at error:\n%s", text[:min(len(text), 4000)])
	}
	if !regexp.MustCompile(`level=ERROR msg=main\.main\(\)`).MatchString(text[p:]) {
		t.Fatalf("the panic's stack is not logged whole:\n%s", text[p:])
	}
	recs := earlyRecord.FindAllStringSubmatch(text, -1)
	if len(recs) < 100 || len(recs) > 200 {
		t.Fatalf("%d early records logged; want the first 100 and the last of 200 lines (the panic's among them)", len(recs))
	}
	for i, m := range recs { // 0-99, then the last ones up to 4999
		if want := i; i >= 100 {
			want = 5000 - len(recs) + i
			if m[2] != strconv.Itoa(want) {
				t.Fatalf("log record %d is early record %s; want %d", i, m[2], want)
			}
		} else if m[2] != strconv.Itoa(want) {
			t.Fatalf("log record %d is early record %s; want %d", i, m[2], want)
		}
	}
	if m := leftOut.FindAllStringSubmatch(text, -1); len(m) != 1 || m[0][1] != "WARN" || m[0][2] != strconv.Itoa(5000-len(recs)) {
		t.Fatalf("want one warning saying %d early lines were left out; got %v", 5000-len(recs), m)
	}
}
