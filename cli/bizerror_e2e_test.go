package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airnode/airnode/extensions/bundle"
	"github.com/airnode/airnode/kernel"
	"github.com/airnode/airnode/spi"
)

// bizShop fails with business errors (spi.BizError).
type bizShop struct{}

func (bizShop) Buy(ctx context.Context, sku string) (string, error) {
	return "", spi.NewBizError(1001, "OUT_OF_STOCK", "sku "+sku+" is out of stock", map[string]string{"sku": sku, "note": "back in May"})
}

func (bizShop) Place(ctx context.Context) error {
	return spi.Errorf(spi.StatusBadRequest, "place: %w", &spi.BizError{Reason: "BAD_SKU", Message: "bad sku"})
}

// `airnode call` (the real binary) to a Go provider whose method returns
// a BizError prints the status line, then the code, reason and details,
// with both codecs; under --log-format json a "business error" record.
func TestCallPrintsBizError(t *testing.T) {
	for _, codec := range []string{"msgpack", "json"} {
		t.Run(codec, func(t *testing.T) {
			n := kernel.NewNode(bundle.Catalogs(), kernel.WithLogger(quiet), kernel.WithShutdownWait(0))
			t.Cleanup(func() { _ = n.Close() })
			exp, err := n.Export(context.Background(), bizShop{}, spi.MustParse("airnode://127.0.0.1:0/test.Shop?codec="+codec))
			if err != nil {
				t.Fatal(err)
			}
			u := "airnode://" + exp.URL().Address() + "/test.Shop"

			r := call(t, nil, u, "Buy", `"A-1"`)
			expectFail(t, r, "SERVICE_ERROR: sku A-1 is out of stock (call test.Shop.Buy, provider "+exp.URL().Address()+")\n")
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			want := []string{"business error: code 1001, reason OUT_OF_STOCK", `detail note="back in May"`, "detail sku=A-1"}
			if len(lines) != 4 || strings.Join(lines[1:], "\n") != strings.Join(want, "\n") {
				t.Fatalf("stderr %q; want the status line, then %q", r.stderr, want)
			}

			r = call(t, nil, u, "Place")
			expectFail(t, r, "BAD_REQUEST: place: bad sku (call test.Shop.Place, provider ")
			if !strings.HasSuffix(r.stderr, ")\nbusiness error: code 0, reason BAD_SKU\n") {
				t.Fatalf("Place: stderr %q; want a business error line with reason BAD_SKU last", r.stderr)
			}

			r = call(t, nil, "--log-format", "json", u, "Buy", `"A-1"`)
			if r.code != 1 {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			var rec struct {
				Msg     string            `json:"msg"`
				Code    int               `json:"code"`
				Reason  string            `json:"reason"`
				Message string            `json:"message"`
				Details map[string]string `json:"details"`
			}
			lines = strings.Split(strings.TrimSpace(r.stderr), "\n")
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
				t.Fatalf("%v: %q", err, r.stderr)
			}
			if rec.Msg != "business error" || rec.Code != 1001 || rec.Reason != "OUT_OF_STOCK" || rec.Message != "sku A-1 is out of stock" || rec.Details["sku"] != "A-1" || rec.Details["note"] != "back in May" {
				t.Fatalf("json record %+v; want the BizError", rec)
			}
		})
	}
}
