package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"mcpx/internal/catalog"
	"mcpx/internal/jsonrpc"
)

// identifier is compiled on first use, not at every process's start-up.
var identifier = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`) })

// accessPath is how a script names a tool: tools.server.tool, with
// brackets for names that are not identifiers.
func accessPath(server, tool string) string {
	return "tools" + member(server) + member(tool)
}

func member(name string) string {
	if identifier().MatchString(name) {
		return "." + name
	}
	return "[" + string(jsonrpc.MustMarshal(name)) + "]"
}

// propertyName is name as a TypeScript property key.
func propertyName(name string) string {
	if identifier().MatchString(name) {
		return name
	}
	return string(jsonrpc.MustMarshal(name))
}

// Describe returns TypeScript declarations of the named tools (exposed
// names, or server names for all of a server's tools), generated from
// their input and output schemas, and the names it does not know.
func (e *Engine) Describe(ctx context.Context, names []string) (decls string, unknown []string) {
	snap := e.o.Catalog.Snapshot(ctx)
	byServer := map[string][]*catalog.Tool{}
	seen := map[*catalog.Tool]bool{}
	add := func(t *catalog.Tool) {
		if !seen[t] {
			seen[t] = true
			byServer[t.Server] = append(byServer[t.Server], t)
		}
	}
	for _, n := range names {
		if t, ok := snap.Lookup(n); ok {
			add(t)
			continue
		}
		found := false
		for _, t := range snap.Tools {
			if t.Server == n {
				add(t)
				found = true
			}
		}
		if !found {
			unknown = append(unknown, n)
		}
	}
	var b strings.Builder
	b.WriteString("declare const tools: {\n")
	for _, server := range slices.Sorted(func(yield func(string) bool) {
		for s := range byServer {
			if !yield(s) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "  %s: {\n", propertyName(server))
		for _, t := range byServer[server] {
			writeTool(&b, t)
		}
		b.WriteString("  };\n")
	}
	b.WriteString("};\n")
	return b.String(), unknown
}

// writeTool writes one tool's method declaration.
func writeTool(b *strings.Builder, t *catalog.Tool) {
	var def struct {
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	_ = json.Unmarshal(t.Raw, &def)
	doc := strings.TrimSpace(def.Description)
	ret := "string"
	if len(def.OutputSchema) > 0 {
		ret = tsType(def.OutputSchema, "    ", 0)
		doc += "\nResolves to the tool's structured result."
	} else {
		doc += "\nResolves to the tool's text."
	}
	doc += "\nThrows an Error with the tool's text when the tool fails. Also mcpx.call(" + string(jsonrpc.MustMarshal(t.Name)) + ", args)."
	writeDoc(b, "    ", strings.TrimSpace(doc))
	args := "{}"
	if len(def.InputSchema) > 0 {
		args = tsType(def.InputSchema, "    ", 0)
	}
	fmt.Fprintf(b, "    %s(args: %s): Promise<%s>;\n", propertyName(t.Tool), args, ret)
}

// writeDoc writes a JSDoc comment.
func writeDoc(b *strings.Builder, indent, doc string) {
	if doc == "" {
		return
	}
	doc = strings.ReplaceAll(doc, "*/", "*\\/")
	b.WriteString(indent + "/**\n")
	for _, line := range strings.Split(doc, "\n") {
		b.WriteString(strings.TrimRight(indent+" * "+line, " ") + "\n")
	}
	b.WriteString(indent + " */\n")
}
