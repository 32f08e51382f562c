package cli

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airnode/airnode/spi"
)

// A provider killed mid-run fails the calls that were in flight on it
// after their requests were sent (the provider may have run them) and the
// later calls before theirs were (safe to retry): bench's --json errors
// and its summary show the two apart, as "CHANNEL_INACTIVE (sent)" and
// "CHANNEL_INACTIVE (not sent)", never as one CHANNEL_INACTIVE.
//
// The kill does not trust a sleep to land on calls in flight: under load a
// fast Echo provider may have answered every request it read when the kill
// lands, and the consumer may then read those responses and the end of the
// connection before writing the next request, so that every failure is
// rightly "(not sent)". killWithCallsInFlight makes the condition instead:
// measured calls answered, the provider stopped, requests seen waiting
// unread in its socket, then SIGKILL.
func TestBench_ChannelInactiveSentAndNotSentApart(t *testing.T) {
	p := serve(t, "127.0.0.1:0", t.TempDir(), "--metrics", "127.0.0.1:0")
	m := regexp.MustCompile(`airnode serve: metrics" addr=(\S+)`).FindStringSubmatch(p.logText())
	if m == nil {
		t.Fatal("no metrics address in the log")
	}
	const warmup, req = 100, 100
	benchDone := make(chan struct{})
	type outcome struct {
		how string
		err error
	}
	killed := make(chan outcome, 1)
	go func() {
		how, err := killWithCallsInFlight(p, m[1], warmup+500, req, benchDone)
		killed <- outcome{how, err}
	}()
	var stopped bool
	stopKiller := func() error { // once; also when benchJSON fails the test
		if stopped {
			return nil
		}
		stopped = true
		close(benchDone)
		k := <-killed
		t.Logf("provider %s", k.how)
		return k.err
	}
	defer stopKiller()
	// 20 callers keep about 20 requests in flight: those are sent when
	// the provider dies; the calls after it are not.
	r := benchJSON(t, nil, p.url("demo.Echo")+"?reconnect.backoff=50ms", "--duration", "3500ms", "-c", "20",
		"--warmup", strconv.Itoa(warmup), "--req", strconv.Itoa(req), "--timeout", "2s")
	if err := stopKiller(); err != nil {
		t.Fatalf("%v; bench errors %v", err, r.Errors)
	}
	t.Logf("ok %d, errors %v; first error %s", r.OK, r.Errors, r.FirstError)
	if r.OK == 0 || r.Errors[channelInactiveSent] == 0 || r.Errors[channelInactiveNotSent] == 0 {
		t.Fatalf("ok %d, errors %v: want successful calls and both %q and %q", r.OK, r.Errors, channelInactiveSent, channelInactiveNotSent)
	}
	if n, ok := r.Errors[spi.StatusChannelInactive.String()]; ok {
		t.Fatalf("errors %v: %d calls under the bare CHANNEL_INACTIVE", r.Errors, n)
	}
	var out bytes.Buffer
	printOutcome(&out, "demo.Echo", benchOutcome{Report: r, Case: &benchCase{Req: req, Resp: req, Concurrency: 20}}, benchFlags{connections: 1})
	for _, want := range []string{
		fmt.Sprintf("%s %d", channelInactiveSent, r.Errors[channelInactiveSent]),
		fmt.Sprintf("%s %d", channelInactiveNotSent, r.Errors[channelInactiveNotSent]),
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, out.String())
		}
	}
}

// killWithCallsInFlight SIGKILLs provider p once calls are observably in
// flight on it during bench's measured phase:
//
//  1. its /metrics (at metricsAddr) counts at least answered Echo calls
//     (bench's warm-up is fewer: measured calls have succeeded);
//  2. it is stopped (SIGSTOP), so nothing it has read is answered any more;
//  3. its end of the connection holds at least minUnread bytes it has not
//     read (a request carries --req payload bytes; the consumer's other
//     frames, a smux window update or heartbeat, are a few bytes each):
//     requests the consumer wrote, whose calls are pending — "sent" when
//     the connection dies. Requests it had read before being stopped are
//     in flight too, but not visible: when none shows within a while, it
//     is resumed for a moment (it answers them, the consumer writes new
//     ones) and stopped again.
//
// It returns how the kill went ("killed after 612 Echo calls, with 2748
// bytes unread after 1 stop(s)") once the provider is killed, or an error
// when benchDone closes (bench ended) first or a step fails. It must not
// call t.Fatal: it runs beside benchJSON.
func killWithCallsInFlight(p *provider, metricsAddr string, answered int64, minUnread int, benchDone <-chan struct{}) (string, error) {
	_, portText, err := net.SplitHostPort(p.addr)
	if err != nil {
		return "", err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return "", err
	}
	wait := func(d time.Duration) bool { // false: bench ended
		select {
		case <-benchDone:
			return false
		case <-time.After(d):
			return true
		}
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	var n int64
	for n < answered {
		if !wait(20 * time.Millisecond) {
			return "not killed", fmt.Errorf("bench ended before the provider had answered %d Echo calls (it answered %d)", answered, n)
		}
		if n, err = providerEchoCalls(client, metricsAddr); err != nil {
			return "not killed", err
		}
	}
	for stops := 1; ; stops++ {
		if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			return "not killed", err
		}
		for end := time.Now().Add(500 * time.Millisecond); time.Now().Before(end); {
			unread, err := unreadBytes(port)
			if err != nil {
				return "not killed", err
			}
			if unread >= minUnread {
				how := fmt.Sprintf("killed after %d+ Echo calls, with %d bytes unread after %d stop(s)", n, unread, stops)
				return how, p.cmd.Process.Signal(syscall.SIGKILL)
			}
			if !wait(5 * time.Millisecond) {
				_ = p.cmd.Process.Signal(syscall.SIGCONT)
				return "not killed", fmt.Errorf("bench ended before requests waited unread in the stopped provider (%d stop(s))", stops)
			}
		}
		if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
			return "not killed", err
		}
		if !wait(20 * time.Millisecond) {
			return "not killed", fmt.Errorf("bench ended before requests waited unread in the stopped provider (%d stop(s))", stops)
		}
	}
}

var providerEchoLine = regexp.MustCompile(`(?m)^airnode_calls_total\{method="Echo",service="demo\.Echo",side="provider"\} (\d+)$`)

// providerEchoCalls returns the provider's count of demo.Echo/Echo calls
// from its /metrics at addr: 0 before the first.
func providerEchoCalls(client *http.Client, addr string) (int64, error) {
	resp, err := client.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	m := providerEchoLine.FindSubmatch(body)
	if m == nil {
		return 0, nil
	}
	return strconv.ParseInt(string(m[1]), 10, 64)
}

// unreadBytes returns the bytes waiting unread in the receive queues of
// the established IPv4 TCP connections whose local port is port — the
// provider's ends of its connections (Linux: /proc/net/tcp, whose
// rx_queue field is hexadecimal).
func unreadBytes(port int) (int, error) {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0, err
	}
	total := 0
	for _, line := range strings.Split(string(b), "\n")[1:] {
		// sl local_address rem_address st tx_queue:rx_queue ...
		f := strings.Fields(line)
		if len(f) < 5 || f[3] != "01" { // 01: ESTABLISHED
			continue
		}
		_, lport, _ := strings.Cut(f[1], ":")
		if p, err := strconv.ParseUint(lport, 16, 16); err != nil || int(p) != port {
			continue
		}
		_, rx, _ := strings.Cut(f[4], ":")
		n, err := strconv.ParseUint(rx, 16, 32)
		if err != nil {
			return 0, fmt.Errorf("/proc/net/tcp: rx_queue %q: %v", rx, err)
		}
		total += int(n)
	}
	return total, nil
}

// benchStatus keeps every status name but CHANNEL_INACTIVE's, which it
// splits by spi.ErrRequestSent, however deep in the chain.
func TestBenchStatusNames(t *testing.T) {
	sent := spi.Errorf(spi.StatusChannelInactive, "exchange: channel closed (after its request was sent): %w", spi.ErrRequestSent)
	for _, c := range []struct {
		err  error
		want string
	}{
		{spi.Errorf(spi.StatusServerTimeout, "late"), "SERVER_TIMEOUT"},
		{fmt.Errorf("failover: %w", sent), channelInactiveSent},
		{spi.Errorf(spi.StatusChannelInactive, "connection refused"), channelInactiveNotSent},
		{fmt.Errorf("plain"), "CLIENT_ERROR"},
	} {
		if got := benchStatus(c.err); got != c.want {
			t.Errorf("benchStatus(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
