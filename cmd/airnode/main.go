// Command airnode is the airnode host binary: it runs a node (serve),
// calls and benchmarks services (call, bench), inspects registries
// (registry) and lists and explains the extension catalogs (list).
//
// Exit status: 0 on success, 1 on any failure, with the error on stderr.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// exitCoder is an error that has already been reported to the user (on
// stderr) and carries the exit status to use; run prints nothing more.
type exitCoder interface{ ExitCode() int }

// run executes airnode with args and returns the process exit status: 0 on
// success, otherwise 1 (or the status an exitCoder error asks for) with the
// error written to stderr as "airnode: <error>".
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runApp(ctx, newApp(stdout, stderr), args)
}

// runApp is run with a prepared app (tests swap its catalogs and
// environment).
func runApp(ctx context.Context, a *app, args []string) int {
	defer slog.SetDefault(slog.Default()) // the root replaces it for the command's run
	stdout := &writeCounter{w: a.stdout}
	a.stdout = stdout
	cmd := newRootCommand(a)
	cmd.SetArgs(args)
	c, err := cmd.ExecuteContextC(ctx)
	if err == nil {
		return 0
	}
	if c != nil && c.Name() == "bench" && stdout.n == 0 && jsonRequested(args) {
		// bench --json prints one object even when cobra fails before
		// the command runs (an unknown flag, a bad flag value, a missing
		// SERVICE_URL): the README promises it.
		printJSONFailure(stdout.w, err)
	}
	var ec exitCoder
	if errors.As(err, &ec) {
		if code := ec.ExitCode(); code != 0 {
			return code
		}
		return 1
	}
	fmt.Fprintf(a.stderr, "airnode: %v\n", err)
	return 1
}

// jsonRequested reports whether args, a bench command line, ask for --json
// (the last "--json" or "--json=BOOL" before "--" decides), for errors
// cobra returns before it has parsed every flag.
func jsonRequested(args []string) bool {
	on := false
	for _, arg := range args {
		if arg == "--" {
			break
		}
		if arg == "--json" {
			on = true
		} else if v, ok := strings.CutPrefix(arg, "--json="); ok {
			on, _ = strconv.ParseBool(v)
		}
	}
	return on
}
