package pluginhost_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/sdk/pluginrpc"
	"github.com/airnode/airnode/spi"
)

// tester73 / fix-r #3, end to end: the arguments a filter plugin (a real
// cli/testdata/filterplugin process) passes to next.Invoke are the ones
// the call goes on with, on either side: "upper" upper-cases demo.Echo's
// string arguments and the provider's Fail sees "BOOM", Echo answers
// "HI". "wrongtype" puts a string where Sleep takes an int: the caller
// gets CLIENT_ERROR (consumer side) or BAD_REQUEST (provider side)
// naming the argument, the value and the type, and Sleep never runs.
// Before, the change was dropped with a warning: Fail saw "boom".
func TestFilterPluginArgumentChangesReachTheCall(t *testing.T) {
	for _, side := range []spi.Side{spi.Consumer, spi.Provider} {
		for _, mode := range []string{"upper", "wrongtype"} {
			t.Run(string(side)+"/"+mode, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				_, cat, err := startHostWith(t, nil, config.Plugin{Name: "acme.args", Point: pluginrpc.PointFilter, Command: binary("filterplugin"), Args: []string{mode}})
				if err != nil {
					t.Fatal(err)
				}
				ref := sidedEcho(t, ctx, side, cat, "127.0.0.1:0")
				if mode == "upper" {
					for range 2 {
						if _, err := ref.Invoke(ctx, "Fail", "boom"); spi.StatusOf(err) != spi.StatusServiceError || !strings.Contains(fmt.Sprint(err), "BOOM") {
							t.Fatalf("Fail(boom) = %v; want SERVICE_ERROR BOOM: the provider saw the filter's argument", err)
						}
						if v, err := ref.Invoke(ctx, "Echo", "hi"); err != nil || v != "HI" {
							t.Fatalf("Echo(hi) = %#v, %v; want \"HI\"", v, err)
						}
					}
					return
				}
				st, want := spi.StatusClientError, `filter "acme.args" changed the arguments of demo.Echo.Sleep: argument 0 is "not a number", which does not decode into int`
				if side == spi.Provider {
					st = spi.StatusBadRequest
				}
				for range 2 {
					_, err := ref.Invoke(ctx, "Sleep", 5)
					if spi.StatusOf(err) != st || !strings.Contains(fmt.Sprint(err), want) {
						t.Fatalf("Sleep(5) = %v; want %v %q", err, st, want)
					}
				}
				if side == spi.Provider {
					return
				}
				// A generic call (airnode call's): the consumer has no type
				// to hold the argument to, so it goes as the filter wrote
				// it and the provider refuses it, naming it.
				gctx := spi.WithAttachments(ctx, spi.AttachmentGeneric, spi.GenericTrue)
				_, err = ref.Invoke(gctx, "Sleep", 5)
				if !errors.Is(err, spi.ErrBadRequest) || !strings.Contains(fmt.Sprint(err), "demo.Echo.Sleep argument 0 (int): want an integer") {
					t.Fatalf("generic Sleep(5) = %v; want the provider's BAD_REQUEST naming argument 0 and int", err)
				}
			})
		}
	}
}
