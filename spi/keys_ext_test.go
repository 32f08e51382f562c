package spi_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/airnode/airnode/spi"
)

// TestKeyDocCheckValue: each type accepts its syntax and refuses the rest
// with a *spi.ParamError naming the key and the value.
func TestKeyDocCheckValue(t *testing.T) {
	for _, tc := range []struct {
		typ       string
		good, bad []string
	}{
		{spi.KeyTypeDuration, []string{"1.5s", "200ms", "3000", "0"}, []string{"abc", "-1s", ""}},
		{spi.KeyTypeInt, []string{"0", "-3", " 42"}, []string{"1.5", "x", ""}},
		{spi.KeyTypeIntList, []string{"0", "0,2", "1, 3"}, []string{"0,x", ""}},
		{spi.KeyTypeBool, []string{"true", "false", "1", "0"}, []string{"yes", ""}},
		{spi.KeyTypeSize, []string{"65536", "64KiB", "8MiB"}, []string{"8 parsecs", "", "-1"}},
		{spi.KeyTypeString, []string{"", "anything"}, nil},
		{spi.KeyTypePath, []string{"/tmp/x", "rel/x"}, []string{"", " "}},
		{spi.KeyTypeHosts, []string{"h:1", "h:1,[::1]:2"}, []string{"h", "h:1,", ""}},
	} {
		d := spi.KeyDoc{Key: "k.x", Type: tc.typ, Doc: "a key"}
		for _, v := range tc.good {
			if err := d.CheckValue(v); err != nil {
				t.Errorf("%s %q: %v", tc.typ, v, err)
			}
		}
		for _, v := range tc.bad {
			err := d.CheckValue(v)
			var pe *spi.ParamError
			if !errors.As(err, &pe) || pe.Key != "k.x" || pe.Value != v {
				t.Errorf("%s %q: %v, want a *spi.ParamError naming k.x and the value", tc.typ, v, err)
			}
		}
	}
	e := spi.KeyDoc{Key: "mode", Type: spi.KeyTypeEnum, Values: []string{"a", "b"}, Doc: "mode"}
	if err := e.CheckValue("b"); err != nil {
		t.Error(err)
	}
	if err := e.CheckValue("c"); err == nil || !strings.Contains(err.Error(), "one of a, b") {
		t.Errorf("enum c: %v, want 'one of a, b'", err)
	}
	if err := (spi.KeyDoc{Key: "k", Type: "float"}).CheckValue("1"); err == nil || !strings.Contains(err.Error(), `unknown type "float"`) {
		t.Errorf("unknown type: %v", err)
	}
}

// TestValidateKeys: a good list passes; each kind of mistake is named.
func TestValidateKeys(t *testing.T) {
	good := []spi.KeyDoc{
		{Key: "smux.buffer", Type: spi.KeyTypeSize, Default: "8MiB", Doc: "receive buffer per session, bytes, 256KiB..1GiB"},
		{Key: "heartbeat.timeout", Type: spi.KeyTypeDuration, Doc: "default 3 × heartbeat.interval"},
		{Key: "mode", Type: spi.KeyTypeEnum, Values: []string{"a", "b"}, Default: "a", Doc: "mode"},
	}
	if err := spi.ValidateKeys(good); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		keys []spi.KeyDoc
		want string
	}{
		{[]spi.KeyDoc{{Key: "", Type: spi.KeyTypeInt, Doc: "x"}}, "non-empty URL key"},
		{[]spi.KeyDoc{{Key: "a b", Type: spi.KeyTypeInt, Doc: "x"}}, "non-empty URL key"},
		{[]spi.KeyDoc{{Key: "k", Type: "float", Doc: "x"}}, `unknown type "float"`},
		{[]spi.KeyDoc{{Key: "k", Type: spi.KeyTypeEnum, Doc: "x"}}, "an enum needs them"},
		{[]spi.KeyDoc{{Key: "k", Type: spi.KeyTypeInt, Default: "ten", Doc: "x"}}, `default of key "k"`},
		{[]spi.KeyDoc{{Key: "k", Type: spi.KeyTypeInt}}, "one non-empty line"},
		{[]spi.KeyDoc{{Key: "k", Type: spi.KeyTypeInt, Doc: "a\nb"}}, "one non-empty line"},
		{[]spi.KeyDoc{{Key: "k", Type: spi.KeyTypeInt, Doc: "x"}, {Key: "k", Type: spi.KeyTypeBool, Doc: "y"}}, `"k" declared twice`},
	} {
		if err := spi.ValidateKeys(tc.keys); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.keys, err, tc.want)
		}
	}
}

// p2c is a third-party balancer builder that declares its one key.
type p2c struct{}

func (p2c) Keys() []spi.KeyDoc {
	return []spi.KeyDoc{{Key: "p2c.choices", Type: spi.KeyTypeInt, Default: "2", Doc: "providers sampled per pick, 2..8"}}
}

// An extension builder declares the keys it reads by implementing
// spi.KeyDescriber; its tests check the declarations with ValidateKeys,
// and CheckValue says whether a value has the key's syntax.
func ExampleKeyDescriber() {
	var b any = p2c{}
	d, ok := b.(spi.KeyDescriber)
	if !ok {
		return
	}
	fmt.Println(spi.ValidateKeys(d.Keys()))
	for _, k := range d.Keys() {
		fmt.Printf("%s (%s, default %s): %s\n", k.Key, k.Type, k.Default, k.Doc)
		fmt.Println(k.CheckValue("three"))
	}
	// Output:
	// <nil>
	// p2c.choices (int, default 2): providers sampled per pick, 2..8
	// invalid value "three" for URL key "p2c.choices": want an integer
}
