// Package opencode carries the opencode plugin (src/index.ts, an npm
// package of its own) inside mcpx, so that mcpx install can put it where
// opencode loads plugins: JS is the plugin as one ES module, its types
// stripped by esbuild; Install writes it into an opencode config
// directory's plugins folder. The module imports @opencode-ai/plugin,
// which opencode provides to the plugins of its config directories.
package opencode

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

//go:embed src/index.ts
var source string

// FileName is the plugin's file in opencode's plugins folder.
const FileName = "mcpx.js"

// header marks a file as the one mcpx wrote, so that installing again
// replaces it and nothing else.
const header = "// The mcpx plugin for opencode, written by mcpx install opencode --plugin; installing again replaces it.\n"

// JS returns the plugin as one ES module.
func JS() ([]byte, error) {
	res := api.Transform(source, api.TransformOptions{
		Loader:     api.LoaderTS,
		Format:     api.FormatESModule,
		Target:     api.ES2022,
		Sourcefile: "mcpx-opencode.ts",
	})
	if len(res.Errors) > 0 {
		msgs := make([]string, len(res.Errors))
		for i, m := range res.Errors {
			msgs[i] = m.Text
		}
		return nil, fmt.Errorf("compiling the opencode plugin: %s", strings.Join(msgs, "; "))
	}
	return append([]byte(header), res.Code...), nil
}

// ErrNotOurs is returned by Install when the plugin's file exists and
// mcpx did not write it.
var ErrNotOurs = errors.New("a plugin file of that name exists and is not mcpx's")

// Install writes the plugin into dir's plugins folder (dir is an opencode
// config directory: ~/.config/opencode, or a project's .opencode) and
// returns its path. It replaces a plugin file mcpx wrote, never another.
func Install(dir string) (string, error) {
	js, err := JS()
	if err != nil {
		return "", err
	}
	plugins := filepath.Join(dir, "plugins")
	path := filepath.Join(plugins, FileName)
	if old, err := os.ReadFile(path); err == nil && !strings.HasPrefix(string(old), header) {
		return "", fmt.Errorf("%s: %w", path, ErrNotOurs)
	}
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(plugins, ".mcpx-*.js")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(js); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}
