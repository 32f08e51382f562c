package kernel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/airnode/airnode/internal/ratelog"
	"github.com/airnode/airnode/kernel/exchange"
)

// A provider method that panics is answered SERVER_ERROR (method.call)
// and logged on the provider at Error, as net/http logs "http: panic
// serving": the service, the method, the panic value, the consumer's
// address and the stack. The lines are bounded per base logger and
// service.method with internal/ratelog, as the kernel's other per-call
// lines are: the first panic of a burst, then one each time the burst's
// count doubles up to 1,024, then one every 10 s, each after the first
// with suppressed and in_burst; a summary says what was left out once a
// burst stops. A consumer calling a method that always panics thus costs
// the log 11 stacks, not one per call.
var methodPanics ratelog.Limiters

// methodPanicMsg is the message of the line (and of its summaries).
const methodPanicMsg = "panic serving a call: answered SERVER_ERROR"

// logMethodPanic logs, rate-bounded, the panic err carries when a method
// of req panicked (a *panicError in err's chain); else it does nothing.
func (s *server) logMethodPanic(req *exchange.Request, err error) {
	var p *panicError
	if !errors.As(err, &p) || !s.log.Enabled(context.Background(), slog.LevelError) {
		return
	}
	ok, suppressed, n := methodPanics.For(s.log).Event(req.Service+"."+req.Method, time.Now(), slog.LevelError, methodPanicMsg)
	if !ok {
		return
	}
	s.log.Error(methodPanicMsg, ratelog.Attrs([]any{"service", req.Service, "method", req.Method,
		"panic", fmt.Sprint(p.value), "consumer", req.Remote, "stack", string(p.stack)}, suppressed, n)...)
}
