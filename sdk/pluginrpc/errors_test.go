package pluginrpc

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/airnode/airnode/spi"
)

func TestErrorsCrossTheBoundaryIntact(t *testing.T) {
	for _, c := range []struct {
		in    error
		check func(error) bool
		text  string
	}{
		{nil, func(e error) bool { return e == nil }, ""},
		{spi.Errorf(spi.StatusServerTimeout, "slow %d", 3), func(e error) bool {
			var se *spi.Error
			return errors.As(e, &se) && se.Status == spi.StatusServerTimeout && errors.Is(e, spi.ErrServerTimeout)
		}, "SERVER_TIMEOUT: slow 3"},
		{fmt.Errorf("wrapped: %w", spi.Errorf(spi.StatusBadRequest, "bad")), func(e error) bool { return errors.Is(e, spi.ErrBadRequest) }, "BAD_REQUEST: bad"},
		{spi.ErrNotSupported, func(e error) bool { return errors.Is(e, spi.ErrNotSupported) }, spi.ErrNotSupported.Error()},
		{fmt.Errorf("static: %w", spi.ErrNotSupported), func(e error) bool { return errors.Is(e, spi.ErrNotSupported) }, "static: registry: operation not supported"},
		{context.DeadlineExceeded, func(e error) bool { return errors.Is(e, context.DeadlineExceeded) }, "context deadline exceeded"},
		{context.Canceled, func(e error) bool { return errors.Is(e, context.Canceled) }, ""},
		{errors.New("plain"), func(e error) bool { return e != nil && spi.StatusOf(e) == spi.StatusClientError }, "plain"},
	} {
		out := fromPB(toPB(c.in))
		if !c.check(out) {
			t.Errorf("%v became %v (%T)", c.in, out, out)
		}
		if c.text != "" && out.Error() != c.text {
			t.Errorf("%v became text %q, want %q", c.in, out.Error(), c.text)
		}
	}
}
