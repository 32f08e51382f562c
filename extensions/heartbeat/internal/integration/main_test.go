package integration

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if q, ok := os.LookupEnv(childEnv); ok {
		runChild(q)
		return
	}
	goleak.VerifyTestMain(m)
}
