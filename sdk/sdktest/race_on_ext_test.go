//go:build race

package sdktest_test

// raceOn: the race detector is on (it slows gRPC round trips about tenfold).
const raceOn = true
