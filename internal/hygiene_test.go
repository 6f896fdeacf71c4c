package internal_test

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoMergeLeftovers: no file a merge or a patch leaves behind
// (name.orig, name.rej) is in the module's tree, where it would be
// committed with the next "git add -A" and read as source by whoever
// opens it.
func TestNoMergeLeftovers(t *testing.T) {
	root := ".."
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		files++
		if ext := filepath.Ext(path); ext == ".orig" || ext == ".rej" {
			t.Errorf("%s is a merge or patch leftover: remove it", filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 500 {
		t.Fatalf("walked %d files from %s: is the test run from internal?", files, root)
	}
}
