// Package limitkey checks the integer limit keys of the limit filters
// ("executes", "actives") at service and method level.
package limitkey

import (
	"fmt"
	"strings"

	"github.com/airnode/airnode/spi"
)

// Check returns a *spi.ParamError for the first of key and "<prefix>.key"
// in u that is not an integer from 0 (no limit) to max.
func Check(u spi.URL, key string, max int64) error {
	for _, k := range u.Keys() {
		if k != key && !strings.HasSuffix(k, "."+key) {
			continue
		}
		v, _ := u.Param(k)
		n, err := u.Int(k, 0)
		if err != nil || n < 0 || n > max {
			return &spi.ParamError{Key: k, Value: v, Want: fmt.Sprintf("an integer from 0 (no limit) to %d", max)}
		}
	}
	return nil
}
