package internal_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// archDoc is docs/architecture.md, read from the module root.
const archDoc = "../docs/architecture.md"

var (
	fenced    = regexp.MustCompile("(?s)```.*?```")
	backtick  = regexp.MustCompile("`([^`\n]+)`")
	goFile    = regexp.MustCompile(`^[\w./*-]+\.go$`)
	fileIdent = regexp.MustCompile("`([\\w/]+\\.go)`,? \\(?`([A-Za-z_][\\w.]*)`")
	identFile = regexp.MustCompile("`([A-Za-z_][\\w.]*)` \\(`([\\w/]+\\.go)`")
)

// archPath finds a Go file the doc names: relative to internal/ (as the
// doc names packages), to the module root, or, for a bare file name, to
// the package named last before it on the same line. It returns the
// file's path from the module root, "" if there is none (a pattern
// matches at least one file).
func archPath(name, pkg string) string {
	cands := []string{filepath.Join("internal", name), name}
	if !strings.Contains(name, "/") && pkg != "" {
		cands = []string{filepath.Join("internal", pkg, name)}
	}
	for _, c := range cands {
		if m, _ := filepath.Glob(filepath.Join("..", c)); len(m) > 0 {
			return c
		}
	}
	return ""
}

// TestArchitectureNamesRealFiles: every Go file docs/architecture.md
// names exists, and a name it gives beside a file ("`relay/call.go`
// (`CallTool`)") is in that file, so that a file renamed, moved or split
// leaves no claim in the doc pointing at nothing.
func TestArchitectureNamesRealFiles(t *testing.T) {
	raw, err := os.ReadFile(archDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := fenced.ReplaceAllString(string(raw), "")
	files := 0
	for i, line := range strings.Split(doc, "\n") {
		pkg := ""
		for _, m := range backtick.FindAllStringSubmatch(line, -1) {
			tok := m[1]
			if fi, err := os.Stat(filepath.Join("..", "internal", tok)); err == nil && fi.IsDir() {
				pkg = tok
				continue
			}
			if !goFile.MatchString(tok) {
				continue
			}
			files++
			if archPath(tok, pkg) == "" {
				t.Errorf("docs/architecture.md:%d names %s, which is not in the tree", i+1, tok)
			}
		}
	}
	if files < 100 {
		t.Fatalf("found %d Go files named in %s: is the test run from internal/?", files, archDoc)
	}

	flat := strings.Join(strings.Fields(doc), " ")
	pairs := 0
	check := func(file, ident string) {
		path := archPath(file, "")
		if path == "" {
			return // reported above
		}
		src, err := os.ReadFile(filepath.Join("..", path))
		if err != nil {
			t.Error(err)
			return
		}
		pairs++
		name := ident[strings.LastIndex(ident, ".")+1:]
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).Match(src) {
			t.Errorf("docs/architecture.md names %s beside %s, which has no %s", ident, file, name)
		}
	}
	for _, m := range fileIdent.FindAllStringSubmatch(flat, -1) {
		check(m[1], m[2])
	}
	for _, m := range identFile.FindAllStringSubmatch(flat, -1) {
		check(m[2], m[1])
	}
	t.Logf("%d Go files named, %d names beside a file", files, pairs)
	if pairs < 30 {
		t.Fatalf("found %d names beside a file in %s, want 30 or more", pairs, archDoc)
	}
}
