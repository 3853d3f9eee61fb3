package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// A tiny JSON Schema validator for the subset docs/json-output.schema.json
// uses (type, required, properties, additionalProperties, items, $ref into
// $defs, oneOf, const, minimum). A keyword outside the subset fails the
// test, so the schema cannot silently outgrow the validator.

type schemaValidator struct {
	root map[string]any
}

var annotationKeywords = map[string]bool{"$schema": true, "$id": true, "title": true, "description": true, "$defs": true}

func (v *schemaValidator) validate(s map[string]any, x any, path string) []string {
	var errs []string
	for k := range s {
		switch k {
		case "type", "required", "properties", "additionalProperties", "items", "$ref", "oneOf", "const", "minimum":
		default:
			if !annotationKeywords[k] {
				errs = append(errs, fmt.Sprintf("%s: schema keyword %q not supported by the test validator", path, k))
			}
		}
	}
	if ref, ok := s["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/$defs/")
		def, ok := v.root["$defs"].(map[string]any)[name].(map[string]any)
		if !found || !ok {
			return append(errs, path+": unresolvable $ref "+ref)
		}
		errs = append(errs, v.validate(def, x, path)...)
	}
	if t, ok := s["type"]; ok {
		var types []string
		switch t := t.(type) {
		case string:
			types = []string{t}
		case []any:
			for _, e := range t {
				types = append(types, e.(string))
			}
		}
		match := false
		for _, ty := range types {
			match = match || hasType(x, ty)
		}
		if !match {
			return append(errs, fmt.Sprintf("%s: %s is not of type %v", path, short(x), types))
		}
	}
	if c, ok := s["const"]; ok && !reflect.DeepEqual(c, x) {
		errs = append(errs, fmt.Sprintf("%s: %s is not %v", path, short(x), c))
	}
	if m, ok := s["minimum"].(float64); ok {
		if f, isNum := x.(float64); isNum && f < m {
			errs = append(errs, fmt.Sprintf("%s: %v < minimum %v", path, f, m))
		}
	}
	if alts, ok := s["oneOf"].([]any); ok {
		n := 0
		for _, a := range alts {
			if len(v.validate(a.(map[string]any), x, path)) == 0 {
				n++
			}
		}
		if n != 1 {
			errs = append(errs, fmt.Sprintf("%s: %s matches %d of oneOf's alternatives, want 1", path, short(x), n))
		}
	}
	if obj, ok := x.(map[string]any); ok {
		for _, r := range asSlice(s["required"]) {
			if _, ok := obj[r.(string)]; !ok {
				errs = append(errs, fmt.Sprintf("%s: required field %q missing", path, r))
			}
		}
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if ps, ok := props[k].(map[string]any); ok {
				errs = append(errs, v.validate(ps, obj[k], path+"."+k)...)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					errs = append(errs, fmt.Sprintf("%s: field %q is not in the schema", path, k))
				}
			case map[string]any:
				errs = append(errs, v.validate(ap, obj[k], path+"."+k)...)
			}
		}
	}
	if arr, ok := x.([]any); ok {
		if is, ok := s["items"].(map[string]any); ok {
			for i, e := range arr {
				errs = append(errs, v.validate(is, e, fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
	}
	return errs
}

func asSlice(x any) []any { s, _ := x.([]any); return s }

func hasType(x any, ty string) bool {
	switch ty {
	case "object":
		_, ok := x.(map[string]any)
		return ok
	case "array":
		_, ok := x.([]any)
		return ok
	case "string":
		_, ok := x.(string)
		return ok
	case "boolean":
		_, ok := x.(bool)
		return ok
	case "null":
		return x == nil
	case "number":
		_, ok := x.(float64)
		return ok
	case "integer":
		f, ok := x.(float64)
		return ok && f == float64(int64(f))
	}
	return false
}

func short(x any) string {
	b, _ := json.Marshal(x)
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

func loadSchema(t *testing.T) *schemaValidator {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "json-output.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	return &schemaValidator{root: root}
}

func decodeJSON(t *testing.T, in *Input) any {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJSON(&b, in); err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b.Bytes(), &x); err != nil {
		t.Fatal(err)
	}
	return x
}

func TestJSONMatchesSchema(t *testing.T) {
	v := loadSchema(t)
	ins := allInputs()
	for _, name := range sortedNames(ins) {
		if errs := v.validate(v.root, decodeJSON(t, ins[name]), "$"); len(errs) > 0 {
			t.Errorf("%s: output does not match docs/json-output.schema.json:\n%s", name, strings.Join(errs, "\n"))
		}
	}
}

// The validator must reject what the schema forbids, or the test above
// proves nothing.
func TestSchemaValidatorRejects(t *testing.T) {
	v := loadSchema(t)
	for name, mutate := range map[string]func(m map[string]any){
		"missing file":         func(m map[string]any) { delete(m, "file") },
		"valid is a string":    func(m map[string]any) { m["valid"] = "yes" },
		"undocumented field":   func(m map[string]any) { m["surprise"] = 1 },
		"anomaly without type": func(m map[string]any) { delete(m["anomalies"].([]any)[0].(map[string]any), "type") },
		"step rel not a string": func(m map[string]any) {
			m["anomalies"].([]any)[0].(map[string]any)["cycle"].([]any)[0].(map[string]any)["rel"] = 3
		},
		"negative txn count": func(m map[string]any) {
			m["history"].(map[string]any)["stats"].(map[string]any)["txns"] = -1.0
		},
		"result missing stats": func(m map[string]any) { delete(m["results"].([]any)[0].(map[string]any), "stats") },
	} {
		x := decodeJSON(t, invalidInput()).(map[string]any)
		mutate(x)
		if errs := v.validate(v.root, x, "$"); len(errs) == 0 {
			t.Errorf("%s: validator accepted a broken document", name)
		}
	}
}

// Every field the docs describe exists in the schema and vice versa, so the
// two documents cannot drift apart.
func TestDocsListEverySchemaField(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "json-output.md"))
	if err != nil {
		t.Fatal(err)
	}
	v := loadSchema(t)
	var walk func(s map[string]any, path string)
	walk = func(s map[string]any, path string) {
		props, _ := s["properties"].(map[string]any)
		for k, p := range props {
			if !bytes.Contains(doc, []byte("`"+k+"`")) {
				t.Errorf("docs/json-output.md does not describe `%s` (%s)", k, path)
			}
			walk(p.(map[string]any), path+"."+k)
		}
	}
	walk(v.root, "$")
	for name, d := range v.root["$defs"].(map[string]any) {
		walk(d.(map[string]any), "$defs."+name)
	}
}
