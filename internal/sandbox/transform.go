package sandbox

import (
	"strconv"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// mainName is the function the script body becomes.
const mainName = "__mcpx_main"

// transform turns a script body (JavaScript or TypeScript, with top-level
// await and return) into a program that defines the async function
// mainName, types stripped by esbuild, with an inline source map so that
// errors name the script's own lines. The wrapper adds nothing before the
// body on its first line, so esbuild's own messages name the right line
// and column too.
func transform(code string) (string, error) {
	wrapped := "async function " + mainName + "() {" + code + "\n}"
	res := api.Transform(wrapped, api.TransformOptions{
		Loader:     api.LoaderTS,
		Format:     api.FormatDefault,
		Target:     api.ES2020,
		Sourcemap:  api.SourceMapInline,
		Sourcefile: "script.ts",
		// Keep the wrapper: esbuild drops an unused top-level function
		// only when minifying or tree shaking, neither of which is on.
		TreeShaking: api.TreeShakingFalse,
	})
	if len(res.Errors) > 0 {
		lines := strings.Count(code, "\n") + 1
		msgs := make([]string, 0, len(res.Errors))
		for _, m := range res.Errors {
			msg := m.Text
			if m.Location != nil && m.Location.Line > lines {
				msg = "unexpected end of the script" // at the wrapper's closing brace
			} else if m.Location != nil {
				col := m.Location.Column
				if m.Location.Line == 1 {
					col -= len("async function " + mainName + "() {")
				}
				msg = "line " + strconv.Itoa(m.Location.Line) + ", column " + strconv.Itoa(col+1) + ": " + msg
			}
			msgs = append(msgs, msg)
		}
		return "", &ScriptError{Message: "the script does not compile: " + strings.Join(msgs, "; "), Syntax: true}
	}
	return string(res.Code), nil
}
