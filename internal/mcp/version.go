package mcp

import "slices"

// Protocol revisions.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"
)

// LatestLegacy is the newest initialize-based revision.
const LatestLegacy = Version20251125

// Latest is the newest revision mcpx speaks.
const Latest = Version20260728

// Versions lists every revision mcpx speaks, newest first.
var Versions = []string{Version20260728, Version20251125, Version20250618, Version20250326, Version20241105}

// LegacyVersions lists the initialize-based revisions, newest first.
var LegacyVersions = []string{Version20251125, Version20250618, Version20250326, Version20241105}

// IsSupported reports whether mcpx speaks revision v.
func IsSupported(v string) bool { return slices.Contains(Versions, v) }

// IsModern reports whether v is a stateless revision (2026-07-28 or later):
// no initialize, per-request _meta, server/discover.
func IsModern(v string) bool { return v >= Version20260728 }

// ModernVersions lists the stateless revisions mcpx speaks, newest first:
// those a request without a session may use.
func ModernVersions() []string {
	var out []string
	for _, v := range Versions {
		if IsModern(v) {
			out = append(out, v)
		}
	}
	return out
}

// IsLegacy reports whether v is a supported initialize-based revision.
func IsLegacy(v string) bool { return slices.Contains(LegacyVersions, v) }

// NegotiateLegacy answers an initialize that asked for version v: v itself
// when mcpx speaks it, else the latest legacy revision (lifecycle: the
// server "MUST respond with the same version", else one it supports).
func NegotiateLegacy(v string) string {
	if IsLegacy(v) {
		return v
	}
	return LatestLegacy
}
