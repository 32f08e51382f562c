package spi_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/airnode/airnode/spi"
)

func ExampleParse() {
	u, err := spi.Parse("airnode://[::1]:20880/demo.Echo?version=1.0&group=g&timeout=3000&methods=Echo&Echo.timeout=200ms")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(u.Address(), u.ServiceKey())
	service, _ := u.Duration("timeout", time.Second)
	echo, _ := u.MethodDuration("Echo", "timeout", time.Second)
	fmt.Println(service, echo)
	fmt.Println(u)
	// Output:
	// [::1]:20880 g/demo.Echo:1.0
	// 3s 200ms
	// airnode://[::1]:20880/demo.Echo?Echo.timeout=200ms&group=g&methods=Echo&timeout=3000&version=1.0
}

func ExampleURL_Duration() {
	u := spi.MustParse("airnode://h/demo.Echo?timeout=abc")
	_, err := u.Duration("timeout", time.Second)
	var pe *spi.ParamError
	fmt.Println(errors.As(err, &pe), pe.Key, pe.Value)
	fmt.Println(err)
	// Output:
	// true timeout abc
	// invalid value "abc" for URL key "timeout": want a duration such as 1.5s, 200ms or 3000 (milliseconds)
}
