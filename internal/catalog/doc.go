// Package catalog gathers the tools of every upstream into the one list
// mcpx shows hosts: each tool under an exposed name (namespaced by server,
// or bare when configured and unambiguous), its definition otherwise byte
// for byte as the upstream wrote it, and a word search across all of them.
//
// Resources, resource templates and prompts are merged likewise
// (resources.go, prompts.go): prompts are named like tools; a resource
// keeps its upstream's URI unless another upstream exposes the same one,
// when each becomes mcpx://<server>/<uri>. Lists page by the upstreams'
// own pages under mcpx's cursors (pages.go).
//
// Concurrency: a Catalog is safe for concurrent use; a Snapshot is
// immutable.
package catalog
