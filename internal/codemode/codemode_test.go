package codemode

import (
	"strings"
	"testing"
)

func TestTSType(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"string"}`, "string"},
		{`{"type":["integer","null"]}`, "number | null"},
		{`{"enum":["a","b"]}`, `"a" | "b"`},
		{`{"type":"array","items":{"type":"number"}}`, "number[]"},
		{`{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"number"}]}}`, "Array<string | number>"},
		{`{"type":"object"}`, "Record<string, unknown>"},
		{`{"type":"object","additionalProperties":{"type":"boolean"}}`, "Record<string, boolean>"},
		{`{"type":"object","properties":{"a-b":{"type":"string","description":"dash"},"n":{"type":"integer"}},"required":["n"]}`,
			"{\n  /**\n   * dash\n   */\n  \"a-b\"?: string;\n  n: number;\n}"},
		{`not json`, "unknown"},
		{`{"$ref":"#/x"}`, "unknown"},
	} {
		if got := tsType([]byte(tc.schema), "", 0); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.schema, got, tc.want)
		}
	}
	deep := `{"type":"string"}`
	for range 20 {
		deep = `{"type":"array","items":` + deep + `}`
	}
	if got := tsType([]byte(deep), "", 0); !strings.Contains(got, "unknown") {
		t.Errorf("a schema 20 deep: %s", got)
	}
}

func TestUnwrap(t *testing.T) {
	for _, tc := range []struct{ res, want, err string }{
		{`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`, `"a\nb"`, ""},
		{`{"content":[{"type":"text","text":"x"}],"structuredContent":{"n":1}}`, `{"n":1}`, ""},
		{`{"content":[{"type":"text","text":"no such file"}],"isError":true}`, "", "s.t: no such file"},
		{`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, `[{"type":"image","data":"AA==","mimeType":"image/png"}]`, ""},
	} {
		got, err := unwrap("s", "t", []byte(tc.res))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %q", tc.res, err, tc.err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %s, %v; want %s", tc.res, got, err, tc.want)
		}
	}
	if got := accessPath("my-server", "echo"); got != `tools["my-server"].echo` {
		t.Errorf("accessPath %s", got)
	}
}

func TestToolResult(t *testing.T) {
	got := string(ToolResult(&Outcome{Value: []byte(`{"a":1}`), Console: []string{"x", "y"}}))
	want := `{"content":[{"type":"text","text":"{\"a\":1}"},{"type":"text","text":"console:\nx\ny"}],"structuredContent":{"a":1}}`
	if got != want {
		t.Errorf("%s\nwant %s", got, want)
	}
	got = string(ToolResult(&Outcome{Value: []byte(`[1]`)}))
	if got != `{"content":[{"type":"text","text":"[1]"}]}` {
		t.Errorf("an array: %s", got)
	}
}
