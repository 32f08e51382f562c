package pluginhost_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// tester73 #2, end to end: a filter plugin (a real moody process) wraps
// the call on either side: its next.Invoke runs the rest of the chain in
// the host and returns the real result, and what it returns is what the
// caller gets. It sees demo.Echo.Fail's SERVICE_ERROR as SERVICE_ERROR,
// maps it to BAD_REQUEST, replaces a success with an error, and times a
// Sleep of 200 ms as at least 200 ms. Before, its next.Invoke returned an
// empty OK at once and what it returned after it was ignored.
func TestChainFilterPluginWrapsTheCallOnBothSides(t *testing.T) {
	for _, side := range []spi.Side{spi.Consumer, spi.Provider} {
		for _, tc := range []struct {
			mode, method string
			arg          any
			check        func(v any, err error) error
		}{
			{"see", "Fail", "boom", func(_ any, err error) error {
				if spi.StatusOf(err) != spi.StatusServiceError || !strings.Contains(fmt.Sprint(err), "moody saw SERVICE_ERROR: boom") {
					return fmt.Errorf("want SERVICE_ERROR \"moody saw SERVICE_ERROR: boom\"")
				}
				return nil
			}},
			{"map", "Fail", "boom", func(_ any, err error) error {
				if !errors.Is(err, spi.ErrBadRequest) || !strings.Contains(fmt.Sprint(err), "moody mapped SERVICE_ERROR: boom") {
					return fmt.Errorf("want BAD_REQUEST \"moody mapped SERVICE_ERROR: boom\"")
				}
				return nil
			}},
			{"replace", "Echo", "hello", func(_ any, err error) error {
				if spi.StatusOf(err) != spi.StatusServiceError || !strings.Contains(fmt.Sprint(err), "moody replaced hello") {
					return fmt.Errorf("want SERVICE_ERROR \"moody replaced hello\"")
				}
				return nil
			}},
			{"time", "Sleep", 200, func(v any, err error) error {
				s, _ := v.(string)
				ms, perr := strconv.Atoi(strings.TrimPrefix(s, "took "))
				if err != nil || !strings.HasPrefix(s, "took ") || perr != nil || ms < 200 || ms > 20000 {
					return fmt.Errorf("want \"took N\" with N >= 200 (ms)")
				}
				return nil
			}},
		} {
			t.Run(string(side)+"/"+tc.mode, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				defer cancel()
				cat, _ := moodyHost(t, "filter", map[string]string{"F_MODE": tc.mode})
				ref := sidedEcho(t, ctx, side, cat, "127.0.0.1:0")
				for range 2 {
					v, err := ref.Invoke(ctx, tc.method, tc.arg)
					if bad := tc.check(v, err); bad != nil {
						t.Fatalf("%s(%v) = %#v, %v: %v", tc.method, tc.arg, v, err, bad)
					}
				}
			})
		}
	}
}
