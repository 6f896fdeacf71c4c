package mcp

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mcpx/internal/config"
)

func TestVersionsMatchConfig(t *testing.T) {
	got := slices.Sorted(slices.Values(Versions))
	want := slices.Sorted(slices.Values(config.KnownProtocolVersions))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mcp.Versions and config.KnownProtocolVersions differ (-config +mcp):\n%s", diff)
	}
}

func TestVersionLists(t *testing.T) {
	if !slices.IsSortedFunc(Versions, func(a, b string) int { return -compareStrings(a, b) }) {
		t.Errorf("Versions %v is not newest first", Versions)
	}
	if !slices.IsSortedFunc(LegacyVersions, func(a, b string) int { return -compareStrings(a, b) }) {
		t.Errorf("LegacyVersions %v is not newest first", LegacyVersions)
	}
	if Versions[0] != Latest {
		t.Errorf("Versions[0] = %s, want Latest %s", Versions[0], Latest)
	}
	if LegacyVersions[0] != LatestLegacy {
		t.Errorf("LegacyVersions[0] = %s, want LatestLegacy %s", LegacyVersions[0], LatestLegacy)
	}
	for _, v := range Versions {
		if IsModern(v) == IsLegacy(v) {
			t.Errorf("%s: IsModern = %v and IsLegacy = %v; want exactly one", v, IsModern(v), IsLegacy(v))
		}
		if !IsSupported(v) {
			t.Errorf("IsSupported(%s) = false, want true", v)
		}
	}
	for _, v := range LegacyVersions {
		if !slices.Contains(Versions, v) {
			t.Errorf("legacy version %s is missing from Versions", v)
		}
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func TestVersionPredicates(t *testing.T) {
	tests := []struct {
		v                         string
		modern, legacy, supported bool
	}{
		{Version20241105, false, true, true},
		{Version20250326, false, true, true},
		{Version20250618, false, true, true},
		{Version20251125, false, true, true},
		{Version20260728, true, false, true},
		{"2027-01-01", true, false, false}, // a later stateless revision mcpx does not speak yet
		{"2024-10-07", false, false, false},
		{"2025-12-01", false, false, false},
		{"", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.v, func(t *testing.T) {
			if got := IsModern(tt.v); got != tt.modern {
				t.Errorf("IsModern(%q) = %v, want %v", tt.v, got, tt.modern)
			}
			if got := IsLegacy(tt.v); got != tt.legacy {
				t.Errorf("IsLegacy(%q) = %v, want %v", tt.v, got, tt.legacy)
			}
			if got := IsSupported(tt.v); got != tt.supported {
				t.Errorf("IsSupported(%q) = %v, want %v", tt.v, got, tt.supported)
			}
		})
	}
}

func TestNegotiateLegacy(t *testing.T) {
	tests := []struct {
		asked, want string
	}{
		{Version20241105, Version20241105},
		{Version20250326, Version20250326},
		{Version20250618, Version20250618},
		{Version20251125, Version20251125},
		{Version20260728, LatestLegacy}, // modern is not answered through initialize
		{"2024-10-07", LatestLegacy},
		{"2099-01-01", LatestLegacy},
		{"", LatestLegacy},
		{"garbage", LatestLegacy},
	}
	for _, tt := range tests {
		t.Run(tt.asked, func(t *testing.T) {
			if got := NegotiateLegacy(tt.asked); got != tt.want {
				t.Errorf("NegotiateLegacy(%q) = %q, want %q", tt.asked, got, tt.want)
			}
		})
	}
}
