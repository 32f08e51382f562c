// Command evolve is a test plugin: it serves service acme.Users, whose
// method Put takes a struct of an older version than a newer consumer
// sends (followups item 1: a plugin ignores a field its struct lacks,
// except in a generic call).
package main

import (
	"context"
	"fmt"

	"github.com/airnode/airnode/sdk"
)

type users struct{}

// addr is user's nested struct; a newer consumer's has a Zip too.
type addr struct {
	City string
}

// user is Put's argument as this (older) plugin knows it; a newer
// consumer's has an Email too.
type user struct {
	ID   int64
	Name string
	Addr addr
}

// Put says what it read.
func (users) Put(_ context.Context, u user) (string, error) {
	return fmt.Sprintf("put %d %s %s", u.ID, u.Name, u.Addr.City), nil
}

func main() {
	sdk.Serve(sdk.Plugins{Services: []sdk.Service{{Name: "acme.Users", Impl: users{}}}})
}
