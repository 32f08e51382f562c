package config_test

import (
	"strings"
	"testing"

	"github.com/airnode/airnode/kernel/config"
	"github.com/airnode/airnode/spi"
)

// heartbeat.ping.on.timeout is a bool kernel key (KindBool): true, false,
// 1, 0 pass, at service and method level; anything else is an error naming
// the key, the value and what is allowed.
func TestT12_PingOnTimeoutIsABool(t *testing.T) {
	for _, v := range []string{"true", "false", "1", "0", "FALSE"} {
		if err := config.CheckURL(spi.MustParse("airnode://h:1/s?heartbeat.ping.on.timeout=" + v)); err != nil {
			t.Errorf("heartbeat.ping.on.timeout=%s: %v", v, err)
		}
	}
	for _, q := range []string{"heartbeat.ping.on.timeout=sometimes", "methods.Echo.heartbeat.ping.on.timeout=yes"} {
		err := config.CheckURL(spi.MustParse("airnode://h:1/s?" + q))
		if err == nil || !strings.Contains(err.Error(), "heartbeat.ping.on.timeout") || !strings.Contains(err.Error(), "true or false") {
			t.Errorf("%s: %v, want an error naming the key and true or false", q, err)
		}
	}
}
