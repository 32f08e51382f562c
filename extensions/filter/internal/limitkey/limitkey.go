// Package limitkey checks the integer limit keys of the limit filters
// ("executes", "actives") at service and method level.
package limitkey

import (
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
		if _, err := u.MethodIntIn("", k, 0, 0, max, "no limit"); err != nil {
			return err
		}
	}
	return nil
}
