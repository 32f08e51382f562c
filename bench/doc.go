// Package bench is the closed- and open-loop load generator behind
// `airnode bench` and the plain TCP echo it is compared with.
//
// Run drives Config.Concurrency callers, each calling the given Caller in a
// loop (a closed loop: a caller sends its next call when the previous one
// returns), for Config.Calls calls or Config.Duration, after an unmeasured
// warm-up at the same concurrency. It records the latency of successful
// calls in an HDR histogram (github.com/HdrHistogram/hdrhistogram-go, 1 µs
// to 1 h, 3 significant digits), failures by status name, one timeline
// entry per second, and the process CPU time (getrusage) of the measured
// phase. With Config.Rate, Run is an open loop instead (wrk2's -R): call
// i is intended to start i/Rate after the phase's start, a free caller
// takes it (new callers start as the calls need them, up to Concurrency),
// a call no caller is free for starts late, and its latency counts from
// its intended start (a call a free caller took counts from when it was
// handed out); a duration run stops starting calls at its deadline and
// lasts its schedule; the report's OpenLoop gives the rate asked and
// reached, the late starts and the calls never started. Calls the end of
// the run cut short (ErrUncounted) are counted apart (Report.CutShort).
// Run owns its goroutines and returns after all of them have exited.
//
// EchoServer and EchoClient are the baseline: a pipelined TCP echo with
// request ids ([u32 length][u64 id][payload]), one reader goroutine per
// side, and a flat-combining writer on the client (the caller that finds no
// write in progress writes every queued frame in one syscall), the design
// of /work/shared/bench/peers's "raw" system. No codec, no framework: the
// practical floor of a Go RPC over loopback. Both are safe for concurrent
// use; Close is idempotent and waits for their goroutines.
package bench
