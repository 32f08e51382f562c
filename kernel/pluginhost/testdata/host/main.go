// Command host is a minimal plugin host for tests: it starts the plugin
// binary given as its argument (a loadbalance plugin named p2c), prints
// "pid <plugin pid>" and waits to be killed.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/kernel/pluginhost"
)

func main() {
	h := pluginhost.New([]config.Plugin{{Name: "p2c", Point: "loadbalance", Command: os.Args[1]}})
	if err := h.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("pid %d\n", h.Plugins()[0].PID)
	select {}
}
