//go:build !linux

package promtext

// RegisterProcess registers the process's metrics. They are read from
// /proc, on Linux only: elsewhere the page has none.
func RegisterProcess(r *Registry) {}
