package pluginhost_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/logbuf"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
	"github.com/airnode/airnode/spi"
)

// startChatty starts a host running testdata/chatty, logging into the
// buffer it returns, and returns the invoker of its acme.Chatty service.
func startChatty(t *testing.T) (*pluginhost.Host, *logbuf.Buffer, spi.Invoker) {
	t.Helper()
	logs := &logbuf.Buffer{}
	h := pluginhost.New([]config.Plugin{{Name: "chatty", Point: pluginhost.PointService, Command: binary("chatty")}},
		pluginhost.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	t.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	svcs := h.Services()
	if len(svcs) != 1 {
		t.Fatalf("services %+v", svcs)
	}
	return h, logs, svcs[0].Invoker(spi.MustParse("airnode://127.0.0.1:0/acme.Chatty"))
}

// What a plugin prints on its stdout and stderr after the handshake
// reaches the host's log at info, one record per line naming the plugin
// and the stream (go-plugin discards both by default: a plugin author's
// fmt.Println was lost without a word, new-user tester).
func TestPluginStdoutAndStderrReachTheHostLog(t *testing.T) {
	_, logs, inv := startChatty(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res := inv.Invoke(ctx, &spi.Invocation{Service: "acme.Chatty", Method: "Say", Args: []any{"hello"}})
	if res.Err != nil || res.Value != "hello" {
		t.Fatalf("Say: %v, %v", res.Value, res.Err)
	}
	want := []string{`level=INFO msg="out: hello" component="plugin host" plugin=chatty`, `stream=stdout`, `level=INFO msg="err: hello" component="plugin host" plugin=chatty`, `stream=stderr`}
	deadline := time.Now().Add(10 * time.Second)
	for {
		l := logs.String()
		missing := ""
		for _, w := range want {
			if !strings.Contains(l, w) {
				missing = w
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("host log lacks %q:\n%s", missing, l)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The last line a plugin prints on its stderr before it exits (log.Fatal:
// print, then os.Exit) reaches the host log: the tester lost it 7 times
// in 8 when it went through go-plugin's stdio stream. The warning that it
// exited with a failure status quotes it too (last_stderr), since the
// line itself was logged at info before the exit was known (tester9 #7).
func TestPluginsLastStderrLineBeforeExitIsLogged(t *testing.T) {
	h, logs, inv := startChatty(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 3 {
		pid := info(t, h, "chatty").PID
		want := fmt.Sprintf("config missing %d", i)
		if res := inv.Invoke(ctx, &spi.Invocation{Service: "acme.Chatty", Method: "Die", Args: []any{want}}); res.Err == nil {
			t.Fatal("Die returned")
		}
		deadline := time.Now().Add(10 * time.Second)
		exited := fmt.Sprintf(`last_stderr="FATAL: %s"`, want) // of "plugin exited; restarting" status="exit status 7"
		for !strings.Contains(logs.String(), "FATAL: "+want) || !strings.Contains(logs.String(), exited) {
			if time.Now().After(deadline) {
				t.Fatalf("host log lacks %q or %q:\n%s", "FATAL: "+want, exited, logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		waitRunning(t, h, "chatty", pid) // restarted, before the next round
	}
}

// tester66 F11: a plugin's output reaches the host's log within a bound
// per stream: 5,000 stderr lines in a burst log the first 1,000, and a
// summary at the end of the 10 s window says how many were left out (a
// plugin's 100,000 lines were 100,000 records). Its own log records
// (sdk.Logger) after the handshake have a bound of their own (fix-bx left
// them unbounded): of 5,000 at info the first 1,000, and the error
// record after them.
func TestPluginOutputIsBounded(t *testing.T) {
	_, logs, inv := startChatty(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, m := range []string{"Spew", "Chatter"} {
		if res := inv.Invoke(ctx, &spi.Invocation{Service: "acme.Chatty", Method: m, Args: []any{5000}}); res.Err != nil {
			t.Fatalf("%s: %v", m, res.Err)
		}
	}
	summaries := []string{
		`level=WARN msg="plugin output lines left out: more than the bound" component="plugin host" plugin=chatty point=service stream=stderr suppressed=4000 bound="1000 lines per 10s"`,
		// the error record itself says it, being logged after them
		`level=ERROR msg="chatter done" component="plugin host" plugin=chatty point=service n=5000 suppressed=4000`,
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, summary := range summaries {
		for !strings.Contains(logs.String(), summary) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q in 20 s; log has %d spew lines, %d chatter records:\n%s", summary,
					strings.Count(logs.String(), `msg="spew: `), strings.Count(logs.String(), `msg=chatter `), tailOf(logs.String(), 2000))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if n := strings.Count(logs.String(), `msg="spew: `); n != 1000 {
		t.Errorf("%d spew lines logged; want the first 1000", n)
	}
	if n := strings.Count(logs.String(), `msg=chatter `); n != 1000 {
		t.Errorf("%d chatter records logged; want the first 1000", n)
	}
}

// tailOf returns the last n bytes of s.
func tailOf(s string, n int) string { return s[max(0, len(s)-n):] }
