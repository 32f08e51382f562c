// Command nilplugin is a test service plugin, nil.Svc, whose methods
// return nil and empty slices and maps, to check that msgpack keeps nil
// apart from empty end to end (plugin, host, wire, consumer).
package main

import (
	"context"

	"github.com/airnode/airnode/sdk"
)

type svc struct{}

// Strings returns a nil []string.
func (svc) Strings(context.Context) ([]string, error) { return nil, nil }

// EmptyStrings returns an empty, non-nil []string.
func (svc) EmptyStrings(context.Context) ([]string, error) { return []string{}, nil }

// Map returns a nil map.
func (svc) Map(context.Context) (map[string]int, error) { return nil, nil }

// EmptyMap returns an empty, non-nil map.
func (svc) EmptyMap(context.Context) (map[string]int, error) { return map[string]int{}, nil }

// Record is a result whose slice and map fields are nil.
type Record struct {
	Tags  []string
	Attrs map[string]string
}

// Record returns a Record with nil fields.
func (svc) Record(context.Context) (Record, error) { return Record{}, nil }

// IsNil reports whether its argument arrived as a nil slice.
func (svc) IsNil(_ context.Context, s []string) (bool, error) { return s == nil, nil }

func main() { sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: "nil.Svc", Impl: svc{}}}}) }
