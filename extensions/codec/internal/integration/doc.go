// Package integration holds the codecs' end-to-end tests: real provider
// and consumer nodes on loopback calling a service whose parameters are
// generic values and structs, through every bundled codec that carries
// them (json, msgpack), and cyclic values, which every codec refuses with
// SERIALIZATION_ERROR (protobuf messages included) while both nodes keep
// working.
package integration
