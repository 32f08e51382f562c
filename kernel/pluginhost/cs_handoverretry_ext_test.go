package pluginhost_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
)

// tester96 #1: an upgrade in place whose new binary is no plugin fails
// the handover; the warning names the binary, the cause on one line and
// what to do before the old process exits. Putting a working binary back
// at the path then completes the handover long before the sdk's 30 s:
// the old process never exits by itself, nothing is restarted.
func TestFailedHandoverRetriedWhenTheBinaryChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "greeter")
	testbin.ReplaceFile(t, binary("greeter"), path)
	h, logs := logHost(t, nil, config.Plugin{Name: "greeter", Point: pluginhost.PointService, Command: path})
	old := info(t, h, "greeter").PID
	testbin.ReplaceFile(t, binary("junk"), path)
	asked := time.Now()
	if err := syscall.Kill(old, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	warn := regexp.MustCompile(`level=WARN msg="plugin handover failed: the new binary at ` + regexp.QuoteMeta(path) +
		` did not start, so the running process serves on; it exits within 30s of its SIGTERM \(the sdk's drain, sdk.TermGrace\), and restarts into the same binary fail too: put a working binary back at ` +
		regexp.QuoteMeta(path) + ` before then .*the host tries the handover again each time that file changes" .*pid=` + fmt.Sprint(old) +
		` path=` + regexp.QuoteMeta(path) + ` err="wrote \\"hello from a chatty plugin\\" to stdout before the handshake; [^"\n]*"\n`)
	deadline := time.Now().Add(15 * time.Second)
	for !warn.MatchString(logs.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no warning matching %s:\n%s", warn, logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if i := info(t, h, "greeter"); i.PID != old || i.State != pluginhost.StateRunning {
		t.Fatalf("after the failed handover: %+v, want pid %d running", i, old)
	}
	testbin.ReplaceFile(t, binary("greeter"), path)
	now := waitRunning(t, h, "greeter", old)
	waitGone(t, old, 10*time.Second)
	if took := time.Since(asked); took > 20*time.Second {
		t.Errorf("handover done %v after the SIGTERM, want well before the sdk's 30s", took)
	}
	for _, re := range []string{
		`level=INFO msg="plugin binary changed: trying the handover again" .*pid=` + fmt.Sprint(old),
		`level=INFO msg="plugin handover done: the old process was stopped" .*old_pid=` + fmt.Sprint(old) + ` pid=` + fmt.Sprint(now.PID),
	} {
		// the done line comes after the old process is gone (waitGone
		// can see it first: CI did, 0.56 s in)
		line := regexp.MustCompile(re)
		for end := time.Now().Add(10 * time.Second); !line.MatchString(logs.String()) && time.Now().Before(end); {
			time.Sleep(20 * time.Millisecond)
		}
		if !line.MatchString(logs.String()) {
			t.Errorf("log lacks %s:\n%s", re, logs.String())
		}
	}
	if strings.Contains(logs.String(), "plugin exited; restarting") || now.RestartsTotal != 1 {
		t.Errorf("RestartsTotal %d, want 1 (the handover), and no restart:\n%s", now.RestartsTotal, logs.String())
	}
}
