// Package catalog gathers the tools of every upstream into the one list
// mcpx shows hosts: each tool under an exposed name (namespaced by server,
// or bare when configured and unambiguous), its definition otherwise byte
// for byte as the upstream wrote it, and a word search across all of them.
//
// Concurrency: a Catalog is safe for concurrent use; a Snapshot is
// immutable.
package catalog
