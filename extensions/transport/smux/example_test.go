package smux_test

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/airnode/airnode/extensions/transport/smux"
	"github.com/airnode/airnode/spi"
)

// A provider listens, a consumer dials and opens a stream; bytes go both
// ways on it.
func Example() {
	tr, err := smux.Builder{}.Build(spi.MustParse("airnode://127.0.0.1:0/demo.Echo?smux.buffer=4MiB"))
	if err != nil {
		panic(err)
	}
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	go func() { // the provider echoes the first stream of the first session
		s, err := l.Accept()
		if err != nil {
			return
		}
		defer s.Close()
		st, err := s.Accept()
		if err != nil {
			return
		}
		io.Copy(st, st)
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second) // connect.timeout
	defer cancel()
	sess, err := tr.Dial(ctx, l.Addr().String())
	if err != nil {
		panic(err)
	}
	defer sess.Close()
	st, err := sess.Open()
	if err != nil {
		panic(err)
	}
	st.Write([]byte("hello"))
	buf := make([]byte, 5)
	io.ReadFull(st, buf)
	fmt.Println(string(buf), sess.Multiplexed())
	// Output: hello true
}
