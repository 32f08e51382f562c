package cli

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Tester22 finding 3: bench's summary blamed the provider ("is the
// provider out of file descriptors") when its own dials had failed. The
// text now says how many failed here and why.
func TestT22_BenchSaysDialsFailedHere(t *testing.T) {
	for _, tc := range []struct {
		o    benchOutcome
		want string
	}{
		{benchOutcome{ConnectionsUp: 245, ConnectionsAsked: 300, ConnectionsFailedHere: 55,
			LocalError: "this process is out of file descriptors: see ulimit -n: smux: dial tcp 127.0.0.1:1: socket: too many open files"},
			`^only 245 of 300 connection\(s\) up \(55 failed here, not at the provider: this process is out of file descriptors: see ulimit -n(, which is \d+ for this process)?: smux: dial tcp 127.0.0.1:1: socket: too many open files\)$`},
		{benchOutcome{ConnectionsUp: 240, ConnectionsAsked: 300, ConnectionsFailedHere: 55,
			LocalError: "this host is out of ephemeral ports (EADDRNOTAVAIL: see net.ipv4.ip_local_port_range, and connections in TIME_WAIT): tcp: connect: cannot assign requested address"},
			`^only 240 of 300 connection\(s\) up \(55 failed here, not at the provider: this host is out of ephemeral ports .*; 5 other\(s\) got no answer to their first ping, or were closed at once: is the provider out of file descriptors, or at its connection limit, URL key accepts\? see its log\)$`},
		{benchOutcome{ConnectionsUp: 29, ConnectionsAsked: 40},
			`^only 29 of 40 connection\(s\) up \(the others got no answer to their first ping, or were closed at once: is the provider out of file descriptors`},
	} {
		if got := connectionsText(tc.o, 1); !regexp.MustCompile(tc.want).MatchString(got) {
			t.Errorf("connectionsText(%+v) = %q, want %s", tc.o, got, tc.want)
		}
	}
}

// End to end: `ulimit -n 40; airnode bench --connections 64` against a
// healthy provider says its own dials failed, with the limit, not that
// the provider may be out of descriptors.
func TestT22_BenchOutOfFDsEndToEnd(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd")
	}
	p := serve(t, "127.0.0.1:0", t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", `ulimit -n 40 && exec "$0" bench "$1" --connections 64 -n 200 -c 2`, binary, p.url("demo.Echo"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	line := strings.SplitN(string(out), "\n", 2)[0]
	t.Logf("%s", line)
	want := regexp.MustCompile(`only \d+ of 64 connection\(s\) up \(\d+ failed here, not at the provider: this process is out of file descriptors: see ulimit -n, which is 40 for this process: .*too many open files`)
	if !want.MatchString(string(out)) || strings.Contains(line, "is the provider out of file descriptors") {
		t.Errorf("bench with ulimit -n 40 did not say its own dials failed:\n%s", out)
	}
}
