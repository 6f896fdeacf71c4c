package localapi

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"mcpx/internal/apitype"
)

// The /v1 contract, docs/api/v1.json, is checked against the route table
// and the wire types, so that neither drifts from the other: every /v1
// route is documented and every documented route served, with its
// request and answer schemas; every schema's properties are its Go
// type's JSON fields, with the same JSON types, required exactly when
// the field is always sent.

type oaSchema struct {
	Ref                  string               `json:"$ref"`
	Type                 any                  `json:"type"`
	Format               string               `json:"format"`
	Properties           map[string]*oaSchema `json:"properties"`
	Required             []string             `json:"required"`
	Items                *oaSchema            `json:"items"`
	AdditionalProperties *oaSchema            `json:"additionalProperties"`
}

type oaContent map[string]struct {
	Schema oaSchema `json:"schema"`
}

type oaOperation struct {
	RequestBody *struct {
		Content oaContent `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Content oaContent `json:"content"`
	} `json:"responses"`
}

type oaDoc struct {
	OpenAPI    string                            `json:"openapi"`
	Paths      map[string]map[string]oaOperation `json:"paths"`
	Components struct {
		Schemas map[string]*oaSchema `json:"schemas"`
	} `json:"components"`
}

func readV1Doc(t *testing.T) oaDoc {
	t.Helper()
	b, err := os.ReadFile("../../docs/api/v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var d oaDoc
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("docs/api/v1.json: %v", err)
	}
	if d.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", d.OpenAPI)
	}
	return d
}

const schemaPrefix = "#/components/schemas/"

// oneSchema returns the only schema of c, and its media type.
func oneSchema(t *testing.T, what string, c oaContent) (string, oaSchema) {
	t.Helper()
	if len(c) != 1 {
		t.Errorf("%s: %d media types, want 1", what, len(c))
	}
	for mt, s := range c {
		return mt, s.Schema
	}
	return "", oaSchema{}
}

func TestV1DocMatchesRoutes(t *testing.T) {
	d := readV1Doc(t)
	h := newTestHandler(t)
	served := map[string]bool{}
	roots := []reflect.Type{reflect.TypeFor[apitype.Error]()}
	for _, rt := range h.routes() {
		if strings.HasPrefix(rt.path, "/v1/") != rt.v1 {
			t.Errorf("%s %s: v1 = %v, but the path says otherwise", rt.method, rt.path, rt.v1)
		}
		if !rt.v1 {
			continue
		}
		key := strings.ToLower(rt.method) + " " + rt.path
		served[key] = true
		op, ok := d.Paths[rt.path][strings.ToLower(rt.method)]
		if !ok {
			t.Errorf("%s is served but not documented", key)
			continue
		}
		if rt.in == nil {
			if op.RequestBody != nil {
				t.Errorf("%s documents a request body; the handler reads none", key)
			}
		} else {
			in := reflect.TypeOf(rt.in)
			roots = append(roots, in)
			if op.RequestBody == nil {
				t.Errorf("%s: request body %s is not documented", key, in.Name())
			} else if mt, s := oneSchema(t, key+" request", op.RequestBody.Content); mt != "application/json" || s.Ref != schemaPrefix+in.Name() {
				t.Errorf("%s: request %s %s, want application/json %s", key, mt, s.Ref, in.Name())
			}
		}
		if e, ok := op.Responses["default"]; !ok {
			t.Errorf("%s: no default (error) response", key)
		} else if _, s := oneSchema(t, key+" default", e.Content); s.Ref != schemaPrefix+"Error" {
			t.Errorf("%s: default response is %s, want Error", key, s.Ref)
		}
		if rt.out == nil {
			if r, ok := op.Responses["204"]; !ok || len(r.Content) != 0 || len(op.Responses) != 2 {
				t.Errorf("%s answers 204 with no body; documented %+v", key, op.Responses)
			}
			continue
		}
		out := reflect.TypeOf(rt.out)
		roots = append(roots, out)
		r, ok := op.Responses["200"]
		if !ok || len(op.Responses) != 2 {
			t.Errorf("%s answers 200 (and errors) only; documented %+v", key, op.Responses)
			continue
		}
		wantMT := "application/json"
		if rt.ndjson {
			wantMT = "application/x-ndjson"
		}
		if mt, s := oneSchema(t, key+" 200", r.Content); mt != wantMT || s.Ref != schemaPrefix+out.Name() {
			t.Errorf("%s: 200 is %s %s, want %s %s", key, mt, s.Ref, wantMT, out.Name())
		}
	}
	for path, ops := range d.Paths {
		for method := range ops {
			if !served[method+" "+path] {
				t.Errorf("%s %s is documented but not served", method, path)
			}
		}
	}

	// Every struct type the routes use has its schema, and no schema is
	// left over.
	seen := map[string]bool{}
	var walk func(reflect.Type)
	walk = func(rt reflect.Type) {
		switch rt.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map:
			if rt == reflect.TypeFor[json.RawMessage]() {
				return
			}
			walk(rt.Elem())
		case reflect.Struct:
			if rt == reflect.TypeFor[time.Time]() || seen[rt.Name()] {
				return
			}
			seen[rt.Name()] = true
			s, ok := d.Components.Schemas[rt.Name()]
			if !ok {
				t.Errorf("wire type %s has no schema", rt.Name())
				return
			}
			checkStruct(t, rt, s)
			for f := range rt.Fields() {
				walk(f.Type)
			}
		}
	}
	for _, rt := range roots {
		walk(rt)
	}
	for name := range d.Components.Schemas {
		if !seen[name] {
			t.Errorf("schema %s is no wire type of a /v1 route", name)
		}
	}
}

// checkStruct compares a struct type's JSON fields with a schema.
func checkStruct(t *testing.T, rt reflect.Type, s *oaSchema) {
	t.Helper()
	if s.Type != "object" {
		t.Errorf("%s: type %v, want object", rt.Name(), s.Type)
	}
	var required []string
	fields := map[string]bool{}
	for f := range rt.Fields() {
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		fields[name] = true
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			required = append(required, name)
		}
		p, ok := s.Properties[name]
		if !ok {
			t.Errorf("%s.%s (json %q) is not documented", rt.Name(), f.Name, name)
			continue
		}
		checkType(t, rt.Name()+"."+name, f.Type, p)
	}
	for name := range s.Properties {
		if !fields[name] {
			t.Errorf("%s documents %q, which the Go type has not", rt.Name(), name)
		}
	}
	slices.Sort(required)
	got := slices.Sorted(slices.Values(s.Required))
	if !slices.Equal(got, required) {
		t.Errorf("%s: required %v, want %v (the fields always sent)", rt.Name(), got, required)
	}
}

// checkType compares one Go type with a property's schema.
func checkType(t *testing.T, what string, rt reflect.Type, p *oaSchema) {
	t.Helper()
	if rt == reflect.TypeFor[json.RawMessage]() {
		if p.Type != nil || p.Ref != "" {
			t.Errorf("%s holds any JSON; documented as %v%s", what, p.Type, p.Ref)
		}
		return
	}
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	if rt == reflect.TypeFor[time.Time]() {
		if !hasType(p, "string") || p.Format != "date-time" {
			t.Errorf("%s is a time: want string date-time, documented %v %q", what, p.Type, p.Format)
		}
		return
	}
	want := ""
	switch rt.Kind() {
	case reflect.String:
		want = "string"
	case reflect.Bool:
		want = "boolean"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint64, reflect.Uint32, reflect.Uint:
		want = "integer"
	case reflect.Float64, reflect.Float32:
		want = "number"
	case reflect.Struct:
		if p.Ref != schemaPrefix+rt.Name() {
			t.Errorf("%s: $ref %q, want %s", what, p.Ref, rt.Name())
		}
		return
	case reflect.Slice:
		if !hasType(p, "array") || p.Items == nil {
			t.Errorf("%s: want an array with items, documented %v", what, p.Type)
			return
		}
		checkType(t, what+"[]", rt.Elem(), p.Items)
		return
	case reflect.Map:
		if !hasType(p, "object") || p.AdditionalProperties == nil {
			t.Errorf("%s: want an object with additionalProperties, documented %v", what, p.Type)
			return
		}
		checkType(t, what+"{}", rt.Elem(), p.AdditionalProperties)
		return
	default:
		t.Fatalf("%s: the test knows no JSON type for %s", what, rt)
	}
	if !hasType(p, want) {
		t.Errorf("%s: type %v, want %s", what, p.Type, want)
	}
}

// hasType reports whether a schema's type (a name, or a list of names
// where null may join it) is want.
func hasType(p *oaSchema, want string) bool {
	switch ty := p.Type.(type) {
	case string:
		return ty == want
	case []any:
		return slices.Contains(ty, any(want))
	}
	return false
}
