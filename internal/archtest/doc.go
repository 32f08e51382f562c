// Package archtest holds the test that enforces airnode's import rules
// with `go list -deps`:
//
//   - spi imports nothing of airnode;
//   - kernel/... never depends on extensions/... (non-test dependencies);
//   - extensions/... never depend on kernel/..., except extensions/bundle,
//     the one explicit list that adds bundled extensions to the kernel's
//     catalogs;
//   - an extension (extensions/KIND/NAME) imports no other extension:
//     what two share lives in an internal package (extensions/lb/warmup,
//     the warm-up weights every balancer shares, is the one public
//     exception).
//
// It has no non-test code besides this comment.
package archtest
