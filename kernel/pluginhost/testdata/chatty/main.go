// Command chatty is a test plugin: service acme.Chatty, whose Say(s)
// prints "out: s" on its stdout and "err: s" on its stderr (after the
// handshake, as a plugin's own prints would be) and returns s, and whose
// Die(s) prints "FATAL: s" on its stderr and exits 7, as log.Fatal does;
// Spew(n) prints n lines "spew: i" on its stderr; Note(s) logs s at info
// with the plugin's logger (sdk.Logger); Chatter(n) logs n records
// "chatter" (i=0..n-1) at info with it, then one at error.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/airnode/airnode/sdk"
)

type chatty struct{}

func (chatty) Say(_ context.Context, s string) (string, error) {
	fmt.Fprintln(os.Stdout, "out: "+s)
	fmt.Fprintln(os.Stderr, "err: "+s)
	return s, nil
}

func (chatty) Die(_ context.Context, s string) (string, error) {
	fmt.Fprintln(os.Stderr, "FATAL: "+s)
	os.Exit(7)
	return "", nil
}

func (chatty) Note(_ context.Context, s string) (string, error) {
	sdk.Logger().Info(s)
	return s, nil
}

func (chatty) Spew(_ context.Context, n int) (int, error) {
	for i := range n {
		fmt.Fprintf(os.Stderr, "spew: %d\n", i)
	}
	return n, nil
}

func (chatty) Chatter(_ context.Context, n int) (int, error) {
	for i := range n {
		sdk.Logger().Info("chatter", "i", i)
	}
	sdk.Logger().Error("chatter done", "n", n)
	return n, nil
}

func main() { sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: "acme.Chatty", Impl: chatty{}}}}) }
