package pluginhost_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/internal/testbin"
	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
	"github.com/airnode/airnode/spi/spitest"
)

// tester nu77 #5: a consumer call through a required filter plugin
// (plugins.yaml required: true) that is down — killed, its restarts
// failing — fails CLIENT_ERROR naming the plugin and saying it is
// required and the call was not sent; the rest of the chain does not
// run. Once the plugin is back, calls pass through it again. A filter
// plugin not required fails such calls too, with its message of before;
// the provider side answers SERVICE_NOT_FOUND, the call not run (fix-cr:
// a failover consumer retries it on another provider), required or not.
// Each call waits for the restart first, within its deadline (half of it
// on the provider), and fails only because the restarts keep failing.
func TestRequiredFilterPluginDownFailsConsumerCalls(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	testbin.ReplaceFile(t, binary("filterplugin"), good)
	exits := filepath.Join(dir, "exits")
	if err := os.WriteFile(exits, []byte("#!/bin/sh\necho 'auth: key file missing' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		required bool
		side     string
		want     spi.Status
		text     string
	}{
		{"RequiredConsumer", true, "consumer", spi.StatusClientError, `filter "acme.auth" is required (plugins.yaml: required: true), so the call was not sent without it: pluginhost: filter plugin "acme.auth" is unavailable (restarting: `},
		{"NotRequiredConsumer", false, "consumer", spi.StatusClientError, `filter "acme.auth": pluginhost: filter plugin "acme.auth" is unavailable (restarting: `},
		{"RequiredProvider", true, "provider", spi.StatusServiceNotFound, `filter "acme.auth": pluginhost: filter plugin "acme.auth" is unavailable (restarting: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "auth")
			testbin.ReplaceFile(t, good, bin)
			h, cat, err := startHost(t, config.Plugin{Name: "acme.auth", Point: pluginrpc.PointFilter, Command: bin, Required: tc.required})
			if err != nil {
				t.Fatal(err)
			}
			b, err := cat.Filter.Get("acme.auth")
			if err != nil {
				t.Fatal(err)
			}
			f, err := b.Build(spi.MustParse("airnode://127.0.0.1:1/demo.Echo?side=" + tc.side))
			if err != nil {
				t.Fatal(err)
			}
			next := spitest.NewStubInvoker(spi.MustParse("airnode://127.0.0.1:1/demo.Echo"), func(context.Context, *spi.Invocation) spi.Result {
				return spi.Result{Value: "sent"}
			})
			invoke := func() spi.Result {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				return f.Invoke(ctx, next, &spi.Invocation{Method: "Echo", Args: []any{"x"}})
			}
			if r := invoke(); r.Err != nil || r.Value != "sent" {
				t.Fatalf("plugin up: %+v", r)
			}

			testbin.ReplaceFile(t, exits, bin) // its restarts fail until the good binary is back
			pid := info(t, h, "acme.auth").PID
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitGone(t, pid, 5*time.Second)
			before := next.Calls()
			deadline := time.Now().Add(5 * time.Second)
			var r spi.Result
			for {
				r = invoke()
				var se *spi.Error
				if errors.As(r.Err, &se) && strings.Contains(se.Message, "(restarting: ") || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			var se *spi.Error
			if !errors.As(r.Err, &se) || se.Status != tc.want || !strings.HasPrefix(se.Message, tc.text) {
				t.Fatalf("plugin down: %+v\nwant %v %s...", r, tc.want, tc.text)
			}
			t.Logf("down: %v", r.Err)
			// and so after a failed restart, with its reason
			waitFor := time.Now().Add(10 * time.Second)
			for !strings.Contains(info(t, h, "acme.auth").Reason, "auth: key file missing") {
				if time.Now().After(waitFor) {
					t.Fatalf("no failed restart: %+v", info(t, h, "acme.auth"))
				}
				time.Sleep(10 * time.Millisecond)
			}
			if r := invoke(); !errors.As(r.Err, &se) || se.Status != tc.want || !strings.HasPrefix(se.Message, strings.TrimSuffix(tc.text, "(restarting: ")) || !strings.Contains(se.Message, "auth: key file missing") {
				t.Fatalf("plugin's restart failing: %+v", r)
			} else {
				t.Logf("restart failing: %v", r.Err)
			}
			if n := next.Calls() - before; n != 0 {
				t.Fatalf("the rest of the chain ran %d times while the filter plugin was down", n)
			}

			testbin.ReplaceFile(t, good, bin)
			waitRunning(t, h, "acme.auth", pid)
			if r := invoke(); r.Err != nil || r.Value != "sent" {
				t.Fatalf("plugin back: %+v", r)
			}
		})
	}
}
