package exchange_test

import (
	"context"
	"fmt"
	"time"

	"github.com/airnode/airnode/extensions/codec/msgpack"
	"github.com/airnode/airnode/extensions/transport/tcp"
	"github.com/airnode/airnode/kernel/exchange"
	"github.com/airnode/airnode/spi"
)

// A provider Server and a consumer Channel over the tcp transport, with the
// msgpack codec.
func Example() {
	tr, _ := tcp.Builder{}.Build(spi.URL{})
	l, err := tr.Listen("127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	hello := exchange.HandlerFunc(func(ctx context.Context, req *exchange.Request) spi.Result {
		var name string
		if err := req.Args.Decode(&name); err != nil {
			return spi.Result{Err: spi.Errorf(spi.StatusBadRequest, "name: %v", err)}
		}
		return spi.Result{Value: "hello, " + name}
	})
	srv := exchange.NewServer(l, exchange.Options{Codec: codecByID, Handler: hello, Logger: quiet})
	go srv.Serve()
	defer srv.Close()

	sess, err := tr.Dial(context.Background(), srv.Addr().String())
	if err != nil {
		panic(err)
	}
	ch := exchange.NewChannel(sess, exchange.Options{Side: spi.Consumer, Logger: quiet})
	defer ch.Wait()
	defer ch.Close("example done")

	var reply string
	inv := &spi.Invocation{Service: "demo.Hello", Method: "Hello", Args: []any{"airnode"}, Reply: &reply}
	res := ch.Invoke(context.Background(), msgpack.Codec{}, inv, time.Second)
	fmt.Println(reply, res.Err)
	// Output: hello, airnode <nil>
}
