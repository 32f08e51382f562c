// Package extension holds airnode's catalogs: for each extension point, the
// named extensions that can be selected by URL parameters.
//
// A Point is strict when filled (empty, malformed or duplicate names are
// errors) and helpful when it misses (an unknown name lists every available
// name and a close match). Selection is adaptive: the name comes from the
// point's URL key, method-level first, then service-level, then the default.
// Catalogs are plain values: no init() registration; each node and each
// test builds its own with New and fills it from extensions/bundle and
// plugins.yaml. Registration happens before use; lookups are safe for
// concurrent use afterwards.
package extension
