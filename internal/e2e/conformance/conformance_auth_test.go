package conformance

import (
	"os"
	"slices"
	"strings"
	"testing"

	"mcpx/internal/mcpxtest"
)

// authConformanceScenarios are the auth scenarios each suite lists
// (`conformance list`) that grade a user's sign-in: not the client
// credentials, enterprise, DPoP and workload identity extensions, which
// mcpx does not implement.
var authConformanceScenarios = []string{
	"auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3", "auth/basic-cimd",
	"auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported", "auth/scope-omitted-when-undefined",
	"auth/scope-step-up", "auth/scope-retry-limit", "auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post",
	"auth/token-endpoint-auth-none", "auth/pre-registration", "auth/2025-03-26-oauth-metadata-backcompat",
	"auth/2025-03-26-oauth-endpoint-fallback",
}

// authConformanceSuites are the auth scenarios run per suite: each
// suite's own list at its spec version (the 2025-03-26 pair is not in the
// alpha's 2025-11-25 or 2026-07-28 sets; 2026-07-28 adds its own).
var authConformanceSuites = []struct {
	suite     mcpxtest.ConformanceSuite
	scenarios []string
}{
	{mcpxtest.Conformance0116, authConformanceScenarios},
	{mcpxtest.ConformanceAlpha2025, authConformanceScenarios[:14]},
	{mcpxtest.ConformanceAlpha2026, append(slices.Clone(authConformanceScenarios[:14]),
		"auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
		"auth/authorization-server-migration", "auth/iss-supported", "auth/iss-not-advertised", "auth/iss-supported-missing",
		"auth/iss-wrong-issuer", "auth/iss-unexpected", "auth/iss-normalized", "auth/metadata-issuer-mismatch")},
}

// TestConformanceClientAuth runs each auth scenario once per suite, as
// TestConformanceClient runs the others.
func TestConformanceClientAuth(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range authConformanceSuites {
		s.suite.CLI(t)
		t.Run(s.suite.Name, func(t *testing.T) {
			t.Parallel()
			for _, sc := range s.scenarios {
				t.Run(strings.TrimPrefix(sc, "auth/"), func(t *testing.T) {
					t.Parallel()
					runConformanceClient(t, s.suite, sc, exe)
				})
			}
		})
	}
}
