// Command moody is a balancer and filter plugin for tests whose behaviour
// the environment sets:
//
//	LB_MODE    ""      pick the first candidate
//	           "hang"  answer nothing while the file $HANG_FILE exists
//	           "slow"  sleep $SLOW_MS milliseconds, then pick the first
//	           "nil"   pick nothing
//	           "args"  pick the second candidate when the call has arguments
//	           "foreign" return an invoker that is not one of the candidates
//	           "panic" panic ("moody: Select asked to panic")
//	           "waited" pick the candidate whose oldest call in flight has
//	           waited least (spi.Stats.OldestInFlight)
//	LB_BUILD   "hang"  Build answers nothing while $HANG_FILE exists
//	F_BUILD    "hang"  the filter's Build never returns (else it logs
//	           "moody: filter built" at debug)
//	F_MODE     "forge" set remote, Remote, timeout and token (and x-forged)
//	           and pass
//	           "args"  short-circuit with the number of arguments it got
//	           "refuse" short-circuit with the plain error "moody: refused"
//	           "deny"  short-circuit with BAD_REQUEST whose Cause is
//	           spi.ErrAccessDenied, as an access check refuses
//	           "chan"  short-circuit with a value JSON cannot encode
//	           "slow"  sleep $SLOW_MS milliseconds, then pass
//	           "stuck" never return (until the host stops the process)
//	           "post"  call next, then return SERVICE_ERROR "moody: post"
//	           "mutate" set the first argument to "mutated" and pass
//	           "wrap"  call next and return its result
//	           "overrun" call next, then give up at its own bound 200ms
//	           before the call's deadline: context.DeadlineExceeded (a
//	           filter whose work after next outlasts the call)
//	           "see"   call next; return its error with its status, the
//	           message "moody saw <STATUS>: <message>"; else its result
//	           "map"   call next; a SERVICE_ERROR becomes BAD_REQUEST
//	           "moody mapped SERVICE_ERROR: <message>"
//	           "replace" call next; a success becomes SERVICE_ERROR
//	           "moody replaced <value>"
//	           "stamp" call next and return its result with the response
//	           attachment x-stamped=moody added (in next's map when it has
//	           one, as a filter adding a header does)
//	           "time"  call next; a success becomes the value
//	           "took <ms>" (the call's duration in whole milliseconds)
//	READS_RESULT "false" the filter builder says it does not read next's
//	           result (sdk.ResultReader): a pass before the call
//	READS_ARGS "false" both builders say they do not read arguments
//	LB_KEYS    "zone"  the balancer declares the key zone, read from
//	           provider URLs (spi.KeyDoc.FromProviders)
//	START_DELAY a Go duration slept before sdk.Serve (a slow start)
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/airnode/airnode/sdk"
	"github.com/airnode/airnode/spi"
)

// hang waits while $HANG_FILE exists (the test removes it to let go).
func hang() {
	for {
		if _, err := os.Stat(os.Getenv("HANG_FILE")); err != nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type lbBuilder struct{}

func (lbBuilder) Name() string         { return "moody" }
func (lbBuilder) ReadsArguments() bool { return os.Getenv("READS_ARGS") != "false" }
func (lbBuilder) Keys() []spi.KeyDoc {
	if os.Getenv("LB_KEYS") != "zone" {
		return nil
	}
	return []spi.KeyDoc{{Key: "zone", Type: spi.KeyTypeString, Doc: "the provider's zone", FromProviders: true}}
}
func (lbBuilder) Build(spi.URL) (spi.LoadBalance, error) {
	if os.Getenv("LB_BUILD") == "hang" {
		hang()
	}
	return lb{}, nil
}

type lb struct{}

func (lb) Select(invokers []spi.Invoker, inv *spi.Invocation) spi.Invoker {
	switch os.Getenv("LB_MODE") {
	case "hang":
		hang()
	case "slow":
		ms, _ := strconv.Atoi(os.Getenv("SLOW_MS"))
		time.Sleep(time.Duration(ms) * time.Millisecond)
	case "nil":
		return nil
	case "foreign":
		return struct{ spi.Invoker }{invokers[0]}
	case "panic":
		panic("moody: Select asked to panic")
	case "args":
		if len(inv.Args) > 0 && len(invokers) > 1 {
			return invokers[1]
		}
	case "waited":
		now, best := spi.Mono(), invokers[0]
		for _, x := range invokers[1:] {
			if x.Stats().OldestInFlight(now) < best.Stats().OldestInFlight(now) {
				best = x
			}
		}
		return best
	}
	return invokers[0]
}

type filterBuilder struct{}

func (filterBuilder) Name() string         { return "moody" }
func (filterBuilder) ReadsArguments() bool { return os.Getenv("READS_ARGS") != "false" }
func (filterBuilder) ReadsResult() bool    { return os.Getenv("READS_RESULT") != "false" }
func (filterBuilder) Activation() spi.Activation {
	return spi.Activation{Sides: []spi.Side{spi.Consumer, spi.Provider}}
}
func (filterBuilder) Build(spi.URL) (spi.Filter, error) {
	if os.Getenv("F_BUILD") == "hang" {
		select {} // until the host stops the process
	}
	sdk.Logger().Debug("moody: filter built")
	return filter{}, nil
}

type filter struct{}

func (filter) Invoke(ctx context.Context, next spi.Invoker, inv *spi.Invocation) spi.Result {
	switch os.Getenv("F_MODE") {
	case "forge":
		inv.SetAttachment(spi.AttachmentRemote, "6.6.6.6:1")
		inv.SetAttachment(spi.AttachmentTimeout, "1")
		inv.SetAttachment(spi.AttachmentToken, "forged")
		inv.SetAttachment("Remote", "7.7.7.7:1") // reserved in any case
		inv.SetAttachment("x-forged", "yes")
	case "args":
		return spi.Result{Value: len(inv.Args)}
	case "refuse":
		return spi.Result{Err: errors.New("moody: refused")}
	case "deny":
		return spi.Result{Err: &spi.Error{Status: spi.StatusBadRequest, Message: "moody: denied", Cause: spi.ErrAccessDenied}}
	case "chan":
		return spi.Result{Value: make(chan int)}
	case "slow":
		ms, _ := strconv.Atoi(os.Getenv("SLOW_MS"))
		time.Sleep(time.Duration(ms) * time.Millisecond)
	case "stuck":
		select {}
	case "post":
		next.Invoke(ctx, inv)
		return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "moody: post")}
	case "mutate":
		if len(inv.Args) > 0 {
			inv.Args[0] = "mutated"
		}
	case "wrap":
		return next.Invoke(ctx, inv)
	case "overrun":
		next.Invoke(ctx, inv)
		d, _ := ctx.Deadline()
		after, cancel := context.WithDeadline(ctx, d.Add(-200*time.Millisecond))
		defer cancel()
		<-after.Done()
		return spi.Result{Err: after.Err()}
	case "see":
		r := next.Invoke(ctx, inv)
		if r.Err != nil {
			st := spi.StatusOf(r.Err)
			return spi.Result{Err: spi.Errorf(st, "moody saw %s: %s", st, strings.TrimPrefix(r.Err.Error(), st.String()+": "))}
		}
		return r
	case "map":
		r := next.Invoke(ctx, inv)
		if st := spi.StatusOf(r.Err); st == spi.StatusServiceError {
			return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "moody mapped %s: %s", st, strings.TrimPrefix(r.Err.Error(), st.String()+": "))}
		}
		return r
	case "replace":
		r := next.Invoke(ctx, inv)
		if r.Err == nil {
			return spi.Result{Err: spi.Errorf(spi.StatusServiceError, "moody replaced %v", r.Value)}
		}
		return r
	case "stamp":
		r := next.Invoke(ctx, inv)
		if r.Attachments == nil {
			r.Attachments = map[string]string{}
		}
		r.Attachments["x-stamped"] = "moody"
		return r
	case "time":
		t0 := time.Now()
		r := next.Invoke(ctx, inv)
		if r.Err == nil {
			return spi.Result{Value: fmt.Sprintf("took %d", time.Since(t0).Milliseconds())}
		}
		return r
	case "panic":
		panic("moody: asked to panic")
	case "exit":
		os.Exit(9) // the process dies during the call
	}
	return next.Invoke(ctx, inv)
}

func main() {
	if d, err := time.ParseDuration(os.Getenv("START_DELAY")); err == nil {
		time.Sleep(d)
	}
	sdk.Serve(sdk.Plugins{LoadBalance: lbBuilder{}, Filter: filterBuilder{}})
}
