package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/gpuctl/gpuctl/internal/spec"
)

// YAML writes the spec as a gpuctl spec file: each value with a comment
// naming the file:line it came from, a header naming what was read, and
// a trailer listing unknown values and what was skipped. Everything
// written into a comment is escaped (diag.OneLine) and every string value
// is a plain scalar or double-quoted with its control characters escaped,
// so that no file name, reason or value read can start a line, a key or a
// second YAML document of its own.
func (r *Result) YAML() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Imported by gpuctl import (--from %s) from:\n", diag.OneLine(r.From))
	for _, f := range r.Files {
		fmt.Fprintf(&b, "#   %s\n", diag.OneLine(f))
	}
	b.WriteString("# Each value's comment names the file:line it was read from.\n")
	w := &yamlWriter{b: &b, origins: r.Origins}
	w.value(reflect.ValueOf(*r.Spec), "", 0, false)
	if len(r.Unknowns) > 0 {
		fmt.Fprintf(&b, "#\n# Unknown until %s (left out, not guessed):\n", r.Until())
		for _, u := range r.Unknowns {
			fmt.Fprintf(&b, "#   %s: %s\n", diag.OneLine(u.Path), diag.OneLine(r.reason(u)))
		}
	}
	if len(r.Skipped) > 0 {
		b.WriteString("#\n# Skipped:\n")
		for _, s := range r.Skipped {
			fmt.Fprintf(&b, "#   %s (%s): %s\n", diag.OneLine(s.What), diag.OneLine(s.Origin.String()), diag.OneLine(s.Reason))
		}
	}
	return b.Bytes()
}

type yamlWriter struct {
	b       *bytes.Buffer
	origins map[string]Origin
}

// comment is the origin comment of path, "" when it has none.
func (w *yamlWriter) comment(path string) string {
	if o, ok := w.origins[path]; ok && o.File != "" {
		if o.Note != "" {
			return "  # " + diag.OneLine(o.String()) + " (" + diag.OneLine(o.Note) + ")"
		}
		return "  # " + diag.OneLine(o.String())
	}
	return ""
}

func indent(n int) string { return strings.Repeat("  ", n) }

// value writes v (a struct, map, slice or scalar) as the body of path at
// depth; inList says v is a list item whose first line follows "- ".
func (w *yamlWriter) value(v reflect.Value, path string, depth int, inList bool) {
	switch v.Kind() {
	case reflect.Pointer:
		w.value(v.Elem(), path, depth, inList)
	case reflect.Struct:
		t := v.Type()
		firstLine := true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("yaml")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "" || name == "-" {
				continue
			}
			fv := v.Field(i)
			if strings.Contains(opts, "omitempty") && isEmpty(fv) {
				continue
			}
			p := name
			if path != "" {
				p = path + "." + name
			}
			pre := indent(depth)
			if inList && firstLine {
				pre = ""
			}
			firstLine = false
			w.field(pre, name, fv, p, depth)
		}
	}
}

// field writes "key: value" or "key:" and the nested value.
func (w *yamlWriter) field(pre, key string, v reflect.Value, path string, depth int) {
	for v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		fmt.Fprintf(w.b, "%s%s:%s\n", pre, key, w.comment(path))
		w.value(v, path, depth+1, false)
	case reflect.Map:
		fmt.Fprintf(w.b, "%s%s:%s\n", pre, key, w.comment(path))
		keys := make([]string, 0, v.Len())
		for _, k := range v.MapKeys() {
			keys = append(keys, k.String())
		}
		sort.Strings(keys)
		for _, k := range keys {
			ev := v.MapIndex(reflect.ValueOf(k))
			kp := path + spec.Key(k)
			if ev.Kind() == reflect.Struct {
				w.field(indent(depth+1), scalar(k), ev, kp, depth+1)
				continue
			}
			fmt.Fprintf(w.b, "%s%s: %s%s\n", indent(depth+1), scalar(k), scalarOf(ev), w.comment(kp))
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Struct {
			var items []string
			for i := 0; i < v.Len(); i++ {
				items = append(items, scalarOf(v.Index(i)))
			}
			fmt.Fprintf(w.b, "%s%s: [%s]%s\n", pre, key, strings.Join(items, ", "), w.comment(path))
			return
		}
		fmt.Fprintf(w.b, "%s%s:%s\n", pre, key, w.comment(path))
		for i := 0; i < v.Len(); i++ {
			ip := fmt.Sprintf("%s[%d]", path, i)
			fmt.Fprintf(w.b, "%s- ", indent(depth+1))
			w.value(v.Index(i), ip, depth+2, true)
		}
	default:
		fmt.Fprintf(w.b, "%s%s: %s%s\n", pre, key, scalarOf(v), w.comment(path))
	}
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Map, reflect.Slice:
		return v.Len() == 0
	case reflect.Pointer:
		return v.IsNil()
	}
	return v.IsZero()
}

func scalarOf(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return scalar(v.String())
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int64, reflect.Int32:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Float64, reflect.Float32:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	}
	return fmt.Sprint(v.Interface())
}

// plainScalar are strings YAML reads back as the same string unquoted.
func plainScalar(s string) bool {
	if s == "" || strings.ContainsAny(s, ":#{}[],&*!|>'\"%@`\n\t") || strings.TrimSpace(s) != s || diag.OneLine(s) != s {
		return false
	}
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "null", "~", "y", "n":
		return false
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return false
	}
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "?") {
		return false
	}
	return true
}

// scalar writes a string as YAML: plain where that reads back as the same
// string, else JSON-quoted (valid YAML), with the characters JSON leaves as
// they are but diag.OneLine escapes (NEL, bidi controls) as \u escapes,
// which YAML's double-quoted style reads back.
func scalar(s string) string {
	if plainScalar(s) {
		return s
	}
	b, _ := json.Marshal(s)
	q := string(b)
	if diag.OneLine(q) == q {
		return q
	}
	var sb strings.Builder
	for _, r := range q {
		if r >= 0x80 && diag.OneLine(string(r)) != string(r) {
			fmt.Fprintf(&sb, `\u%04x`, r)
			continue
		}
		sb.WriteRune(r)
	}
	return sb.String()
}
