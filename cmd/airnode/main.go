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
	cmd := newRootCommand(a)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return 0
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
