// Package extension holds airnode's catalogs: for each extension point, the
// named extensions that can be selected by URL parameters.
//
// A Point is strict when filled (empty, malformed, reserved or duplicate
// names are errors, and so is a codec wire id outside 1-31 or held by
// another codec; Register) and helpful when it misses (an *UnknownError lists every
// available name and a close match). Selection is adaptive: Choose takes
// the name from the point's URL key, method-level first, then service-level,
// then the default; the registry point is chosen by the URL scheme, and a
// bare number in "heartbeat" means the default strategy with that interval
// (Normalize). Wrappers added with Wrap decorate every extension Get
// returns. ActivateFilters builds a side's filter chain from activation
// (side, key, order) and the "filter" list ("-name", "default"). Describe
// and Explain feed `airnode list`.
//
// Build is the one way the kernel (and Explain) calls an extension's
// builder: a panic in it becomes a *PanicError naming the point and the
// extension (`loadbalance "x": Build panicked: ...`), and an error is
// prefixed with the point and the name unless it names itself. Registering
// an extension whose KeyDescriber declares a key Secret marks that key
// secret process-wide (spi.MarkSecretKey), so spi.URL.Redacted hides it;
// one declaring Secret a key the kernel reads (timeout, weight, ...), or
// a key another extension of the process declares without Secret (the
// accesslog filter's "accesslog"), is refused, and so is the later of two
// extensions whenever one's mark would hide the other's key (Register).
// The mark holds only in processes that registered the extension:
// another process (a stock airnode listing the registry) shows the value.
//
// Catalogs are plain values: no init() registration; each node and each
// test builds its own with New and fills it from extensions/bundle and
// plugins.yaml (extensiontest has stand-ins for tests). Register before
// use; lookups are safe for concurrent use afterwards.
//
// A third party's in-process extension follows the same rule: its package
// exports a function that registers it on the Catalogs it is given
// (cat.LoadBalance.Register(b, Origin("github.com/acme/lb/first")), its Go
// package path as the Origin), never an init() that registers it
// somewhere global. A program calls that function on the catalogs it
// builds for kernel.NewNode, after bundle.Register; to get the whole
// airnode command line with it, the program's main passes it to
// cli.WithExtensions (package github.com/airnode/airnode/cli), which runs
// it on every Catalogs serve, call, bench, list and registry build.
package extension
