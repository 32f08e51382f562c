package failover

import "github.com/airnode/airnode/spi"

// URL keys and defaults.
const (
	// KeyRetries is the number of extra attempts after the first.
	KeyRetries = "retries"
	// KeyIdempotent marks a method safe to run twice, so that it is also
	// retried after SERVER_TIMEOUT, SERVER_ERROR and CHANNEL_INACTIVE
	// after the request was sent.
	KeyIdempotent = "idempotent"

	DefaultRetries = 2
	// MaxRetries bounds retries.
	MaxRetries = 100
)

// policy is the retry policy of one method (or the service).
type policy struct {
	retries    int
	idempotent bool
}

func parsePolicy(u spi.URL, method string) (policy, error) {
	n, err := u.MethodInt(method, KeyRetries, DefaultRetries)
	if err != nil {
		return policy{}, err
	}
	if n < 0 || n > MaxRetries {
		v, src, _ := u.MethodParam(method, KeyRetries)
		return policy{}, &spi.ParamError{Key: src, Value: v, Want: "an integer from 0 to 100"}
	}
	idem, err := u.MethodBool(method, KeyIdempotent, false)
	if err != nil {
		return policy{}, err
	}
	return policy{retries: int(n), idempotent: idem}, nil
}
