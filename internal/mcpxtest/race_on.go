//go:build race

package mcpxtest

const raceEnabled = true
