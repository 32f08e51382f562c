// Package greeter is an example provider implementation served by an
// airnode service plugin: airnode exports greeter.Greeter, registers it and
// forwards its invocations to the plugin process.
//
// Methods: Hello(name string) string answers "Hello, <name>"; an empty
// name is BAD_REQUEST. Pid() int answers the plugin process's PID (to see
// which process served a call). Safe for concurrent use.
package greeter

import (
	"context"
	"os"

	"github.com/airnode/airnode/spi"
)

// ServiceName is the service consumers call.
const ServiceName = "greeter.Greeter"

// Greeter is the service implementation.
type Greeter struct{}

// Hello answers "Hello, <name>".
func (Greeter) Hello(_ context.Context, name string) (string, error) {
	if name == "" {
		return "", spi.Errorf(spi.StatusBadRequest, "greeter: name is empty")
	}
	return "Hello, " + name, nil
}

// Pid returns the PID of the process serving the call. It takes the
// call's context first, as every method should (airnode plugin check warns
// about one that does not), though it has no use for it.
func (Greeter) Pid(context.Context) int { return os.Getpid() }
