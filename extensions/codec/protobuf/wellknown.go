package protobuf

// The well-known types (google/protobuf/*.proto) are linked into every
// program that links this codec, so a result of one of them (an
// Int64Value, a Struct, a Timestamp) is read into *any — by `airnode call`,
// by Reference.Invoke — without the caller importing its package: a
// message read into *any is looked up by name in protoregistry.GlobalTypes,
// which holds only the types whose Go packages are linked in.
import (
	_ "google.golang.org/protobuf/types/known/anypb"
	_ "google.golang.org/protobuf/types/known/apipb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/emptypb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb"
	_ "google.golang.org/protobuf/types/known/sourcecontextpb"
	_ "google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/typepb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"
)
