package cli

import (
	"fmt"
	"path/filepath"

	"mcpx/integrations/opencode"
	"mcpx/internal/hostconfig"
)

// installPlugin serves install --plugin: mcpx's opencode plugin, written
// into the plugins folder beside opencode's config file (where opencode
// loads plugins for every project). The plugin finds the daemon through
// the mcpx command on PATH (or MCPX_BIN): no MCP entry is written.
func installPlugin(env *Env, h *hostconfig.Host, file string, otherFlags, dryRun bool) error {
	if h.Name != "opencode" {
		return usagef("--plugin is for opencode; %s takes an MCP entry", h.Title)
	}
	if otherFlags {
		return usagef("--plugin takes none of --http, --url, --name and --move")
	}
	cfgFile, err := hostFile(env, h, file)
	if err != nil {
		return err
	}
	dir := filepath.Dir(cfgFile)
	if dryRun {
		fmt.Fprintf(env.Stdout, "would write %s\n", filepath.Join(dir, "plugins", opencode.FileName))
		return nil
	}
	path, err := opencode.Install(dir)
	if err != nil {
		return fmt.Errorf("installing the opencode plugin: %w", err)
	}
	fmt.Fprintf(env.Stdout, "wrote %s: opencode offers mcpx's tools through it from its next start\n", path)
	return nil
}
