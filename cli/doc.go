// Package cli is the airnode command line as a library: serve, call,
// bench, list, registry, plugin and stats, exactly as the airnode binary
// (cmd/airnode, whose main is one call to Main) runs them.
//
// A program that imports cli gets the whole command line in its own
// binary: it runs a node (serve), calls and benchmarks services (call,
// bench), inspects registries (registry) and lists and explains the
// extension catalogs (list). With WithExtensions, the program's own
// in-process extensions (a balancer, a codec, a filter... written in Go)
// are in every command's catalogs, next to the bundled ones and the
// plugins of plugins.yaml (README "In-process extensions"):
//
//	func main() { os.Exit(cli.Main(cli.WithName("acme-airnode"), cli.WithExtensions(first.Register))) }
//
// WithName names the program in usage and errors (default "airnode").
// Secrets in URLs (token, a userinfo password, and every key an extension
// of the process declares Secret) are shown as "***" in everything the
// command line prints: logs and errors on stderr, bench's report,
// list --explain, registry ls and watch; Run registers the WithExtensions
// extensions before it checks or prints any URL.
//
// Exit status (Main and Run return it): 0 on success, 1 on any failure,
// with the error on stderr, 2 on a usage error (an unknown command or
// flag, a missing or extra argument, a flag value of the wrong form,
// two flags or sources that contradict each other);
// commands interrupted by SIGINT exit 130 (SIGTERM: 143), as shells
// report a process a signal ended.
package cli
