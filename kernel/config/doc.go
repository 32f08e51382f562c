// Package config is the schema of plugins.yaml, the node's configuration:
// node settings, services to export, references to consume, and plugins to
// launch. DefaultConfig is usable as is; Validate names the field path and
// the bound of the first thing wrong with each field; Load reads
// defaults → file → environment (AIRNODE_ prefix) → command-line flags with
// koanf and decodes strictly: keys match exactly, in lower case as
// documented ("Services:" is unknown, its error naming "services"), and an unknown key is an error naming the key,
// the file and a close allowed key if one is ("did you mean"), a duration needs a unit ("60s"), URL keys are written flat
// ("heartbeat.interval: 60s"; a nested map is an error saying so) and
// their values are kept as written ("version: 1.0" is "1.0", not YAML's
// float 1), and a YAML syntax error names the line it is on. An error about a value set
// by an environment variable or a flag names that variable or flag.
//
// References give consumers defaults: ApplyReference adds the params of the
// reference of a URL's interface that the URL does not set and, when the
// reference has a url ("airnode://h1:p1,h2:p2/demo.Echo", Dubbo's
// reference url) and the URL names no host, that url's providers, which
// then bypass the registry; CheckReferences checks their extension names
// against the catalogs. Consumer gives every reference defaults below its
// own params; AIRNODE_CONSUMER_<KEY> and AIRNODE_PROVIDER_<KEY> set one
// key of Consumer and Protocol over the file's (EnvKey); Load lists the
// AIRNODE_* variables it reads nothing from in Config.UnknownEnv and warns.
//
// The package also knows the kernel's own URL keys (timeout,
// retries, heartbeat.*, ...) and checks their values with CheckURL and
// CheckParams; extensions check their own keys in Build.
//
// Nothing here starts goroutines; a Config is a plain value.
package config
