package consistenthash

import (
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/airnode/airnode/spi"
)

// URL keys and defaults.
const (
	// KeyNodes is the number of virtual nodes per provider on the ring.
	KeyNodes = "hash.nodes"
	// KeyArguments lists the indexes of the arguments that are hashed,
	// comma-separated ("0", "0,2").
	KeyArguments = "hash.arguments"

	DefaultNodes     = 160
	DefaultArguments = "0"
	// MaxNodes bounds hash.nodes (the ring holds providers × nodes points).
	MaxNodes = 65536
)

// config is the resolved configuration of one method (or the service).
type config struct {
	nodes int
	args  []int
	src   string // the hash.arguments key as set ("" when defaulted)
	value string // its value
	ring  ringCache

	warned atomic.Bool // the "names no argument" warning was logged
}

// missesAll reports whether none of the configured argument indexes is
// one of args': every such call hashes alike.
func (c *config) missesAll(args []any) bool {
	for _, i := range c.args {
		if i < len(args) {
			return false
		}
	}
	return true
}

func parseConfig(u spi.URL, method string) (*config, error) {
	c := &config{nodes: DefaultNodes, args: []int{0}}
	n, err := u.MethodIntIn(method, KeyNodes, DefaultNodes, 1, MaxNodes, "")
	if err != nil {
		return nil, err
	}
	c.nodes = int(n)
	if v, src, ok := u.MethodParam(method, KeyArguments); ok {
		c.args, c.src, c.value = c.args[:0], src, v
		for _, f := range strings.Split(v, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 {
				return nil, &spi.ParamError{Key: src, Value: v, Want: "comma-separated argument indexes such as 0 or 0,1"}
			}
			c.args = append(c.args, i)
		}
	}
	return c, nil
}
