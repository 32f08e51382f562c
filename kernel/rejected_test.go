package kernel

import (
	"testing"

	"github.com/airnode/airnode/internal/counters"
)

// Requests answered before the service's filter chain are counted by
// status in counters.Provider; good calls count nothing there.
func TestRejectedRequestsAreCountedByStatus(t *testing.T) {
	_, e := provider(t)
	r := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Echo")
	missing := refer(t, consumer(t), "airnode://"+e.URL().Address()+"/demo.Missing")
	snf0, bad0 := counters.Provider.ServiceNotFound.Load(), counters.Provider.BadRequest.Load()
	for range 3 {
		if _, err := r.Invoke(ctxT(t), "Echo", "ok"); err != nil {
			t.Fatal(err)
		}
	}
	if snf, bad := counters.Provider.ServiceNotFound.Load()-snf0, counters.Provider.BadRequest.Load()-bad0; snf != 0 || bad != 0 {
		t.Fatalf("good calls counted %d SERVICE_NOT_FOUND, %d BAD_REQUEST", snf, bad)
	}
	_ = r.Call(ctxT(t), "Nope", nil, nil)
	_ = missing.Call(ctxT(t), "Echo", []any{1}, nil)
	_ = r.Call(ctxT(t), "Echo", []any{1, 2}, nil)
	_ = r.Call(ctxT(t), "Sleep", []any{"x"}, nil)
	_ = r.Call(ctxT(t), "Fail", []any{true}, nil)
	if snf, bad := counters.Provider.ServiceNotFound.Load()-snf0, counters.Provider.BadRequest.Load()-bad0; snf != 2 || bad != 3 {
		t.Errorf("counted %d SERVICE_NOT_FOUND, %d BAD_REQUEST; want 2 and 3", snf, bad)
	}
}
