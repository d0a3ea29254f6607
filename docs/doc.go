// Package docs holds Kadu's documentation (Markdown beside this file, the
// reference under docs/reference) and the check that keeps every reference
// in the repository pointing at something the repository holds.
//
// It owns: finding references in tracked files (Markdown links, document
// paths named in comments, docs and YAML, numbered sections of sdk/ABI.md,
// and citations of documents that were never part of the repository) and
// resolving them, anchors included, with GitHub's heading slugs. It must not be imported by the server: it is
// a test-time check, and `go test ./...` (so `go tool task test`) runs it.
package docs
