package pluginrpc

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	pb "github.com/airnode/airnode/sdk/pluginrpc/pluginpb"
	"github.com/airnode/airnode/spi"
)

// A panic recovered in a plugin's balancer, registry or filter becomes a
// SERVER_ERROR without the goroutine stack, which goes to the plugin's
// log (hclog's default logger) instead.
func TestRecoveredPanicLogsTheStackAndSendsNone(t *testing.T) {
	var log bytes.Buffer
	prev := hclog.Default()
	hclog.SetDefault(hclog.New(&hclog.LoggerOptions{Output: &log, Level: hclog.Error}))
	defer hclog.SetDefault(prev)

	var e *pb.Error
	func() {
		defer func() { e = recovered("filter Invoke", recover()) }()
		panic("kaboom")
	}()
	out := fromPB(e)
	if spi.StatusOf(out) != spi.StatusServerError || out.Error() != "SERVER_ERROR: panic in plugin filter Invoke: kaboom" {
		t.Fatalf("recovered: %v", out)
	}
	if !strings.Contains(log.String(), "runtime/debug.Stack") || !strings.Contains(log.String(), "kaboom") {
		t.Fatalf("the plugin's log has no stack:\n%s", log.String())
	}
}
