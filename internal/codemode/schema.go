package codemode

import (
	"encoding/json"
	"slices"
	"strings"
)

// maxDepth bounds how deep tsType follows nested schemas.
const maxDepth = 8

// schema is the part of a JSON Schema that becomes a TypeScript type.
type schema struct {
	Type                 json.RawMessage            `json:"type"`
	Properties           map[string]json.RawMessage `json:"properties"`
	Required             []string                   `json:"required"`
	Items                json.RawMessage            `json:"items"`
	Enum                 []json.RawMessage          `json:"enum"`
	Const                json.RawMessage            `json:"const"`
	AnyOf                []json.RawMessage          `json:"anyOf"`
	OneOf                []json.RawMessage          `json:"oneOf"`
	AllOf                []json.RawMessage          `json:"allOf"`
	AdditionalProperties json.RawMessage            `json:"additionalProperties"`
	Description          string                     `json:"description"`
}

// tsType returns the TypeScript type of a JSON Schema; what it cannot
// read is unknown.
func tsType(raw json.RawMessage, indent string, depth int) string {
	if depth > maxDepth || len(raw) == 0 {
		return "unknown"
	}
	if string(raw) == "true" {
		return "unknown"
	}
	if string(raw) == "false" {
		return "never"
	}
	var s schema
	if json.Unmarshal(raw, &s) != nil {
		return "unknown"
	}
	switch {
	case len(s.Const) > 0:
		return string(s.Const)
	case len(s.Enum) > 0:
		parts := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			parts[i] = string(v)
		}
		return strings.Join(parts, " | ")
	case len(s.AnyOf) > 0 || len(s.OneOf) > 0:
		return union(append(s.AnyOf, s.OneOf...), " | ", indent, depth)
	case len(s.AllOf) > 0:
		return union(s.AllOf, " & ", indent, depth)
	}
	var types []string
	if len(s.Type) > 0 && s.Type[0] == '[' {
		_ = json.Unmarshal(s.Type, &types)
	} else if len(s.Type) > 0 {
		var t string
		_ = json.Unmarshal(s.Type, &t)
		types = []string{t}
	} else if s.Properties != nil {
		types = []string{"object"}
	}
	if len(types) == 0 {
		return "unknown"
	}
	parts := make([]string, 0, len(types))
	for _, t := range types {
		parts = append(parts, s.one(t, indent, depth))
	}
	return strings.Join(parts, " | ")
}

// one is the type of the schema as one JSON type.
func (s *schema) one(t, indent string, depth int) string {
	switch t {
	case "string":
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "array":
		item := tsType(s.Items, indent, depth+1)
		if strings.ContainsAny(item, "|&") {
			return "Array<" + item + ">"
		}
		return item + "[]"
	case "object":
		return s.object(indent, depth)
	}
	return "unknown"
}

// object is an object type, its properties' descriptions as comments.
func (s *schema) object(indent string, depth int) string {
	if len(s.Properties) == 0 {
		if len(s.AdditionalProperties) > 0 && string(s.AdditionalProperties) != "false" {
			return "Record<string, " + tsType(s.AdditionalProperties, indent, depth+1) + ">"
		}
		return "Record<string, unknown>"
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	inner := indent + "  "
	var b strings.Builder
	b.WriteString("{\n")
	for _, n := range names {
		var d struct {
			Description string `json:"description"`
		}
		_ = json.Unmarshal(s.Properties[n], &d)
		writeDoc(&b, inner, strings.TrimSpace(d.Description))
		opt := "?"
		if slices.Contains(s.Required, n) {
			opt = ""
		}
		b.WriteString(inner + propertyName(n) + opt + ": " + tsType(s.Properties[n], inner, depth+1) + ";\n")
	}
	b.WriteString(indent + "}")
	return b.String()
}

func union(list []json.RawMessage, sep, indent string, depth int) string {
	parts := make([]string, 0, len(list))
	for _, r := range list {
		t := tsType(r, indent, depth+1)
		if strings.Contains(t, " ") && !strings.HasPrefix(t, "{") {
			t = "(" + t + ")"
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, sep)
}
