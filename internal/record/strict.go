package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/gpuctl/gpuctl/internal/diag"
	"github.com/secure-systems-lab/go-securesystemslib/dsse"
)

// MaxJSONDepth is the deepest nesting of objects and arrays CheckJSON
// accepts (64 levels): a record nests about 6 deep (envelope, statement,
// predicate, stages, evidence). It is checked while the tokens are read,
// before any decoder recurses.
const MaxJSONDepth = 64

// maxShownName is how much of a member name an error quotes (in runes).
const maxShownName = 64

// ErrAmbiguousJSON is JSON that two decoders may read as different values:
// a member name twice in one object, two member names that differ only in
// case (Go's encoding/json matches names case-insensitively and keeps the
// last; jq and Python keep both), a member spelled like one the decoder
// knows but not exactly, data after the value, nesting deeper than
// MaxJSONDepth, or bytes that are not UTF-8.
var ErrAmbiguousJSON = errors.New("JSON that decoders read differently")

// JSONError is the place where CheckJSON refused a document: Where is the
// member's location as a JSON path ("$.signatures[0]"), Member its name
// (cut to 64 characters, control characters escaped), Problem what is
// wrong. It never holds a value.
type JSONError struct {
	Where, Member, Problem string
	// Unreadable marks JSON no decoder reads (a syntax error, bytes that
	// are not UTF-8), as against JSON decoders read differently.
	Unreadable bool
}

func (e *JSONError) Error() string {
	if e.Member == "" {
		return fmt.Sprintf("%s: %s", e.Where, e.Problem)
	}
	return fmt.Sprintf("%s: member %q %s", e.Where, e.Member, e.Problem)
}

func (e *JSONError) Unwrap() error { return ErrAmbiguousJSON }

// CheckJSON holds data to one reading: it returns a *JSONError (wrapping
// ErrAmbiguousJSON) for bytes that are not UTF-8, data after the first
// JSON value, nesting deeper than MaxJSONDepth, an object with a member
// name twice or with two names that differ only in case, and a member
// whose name folds to a field of shape's Go type (what the data is
// decoded into; nil when unknown) without being spelled exactly as that
// field. Objects that shape says are maps may hold names that differ in
// case (Go decodes map keys exactly). Nothing in the error quotes a value.
func CheckJSON(data []byte, shape any) error {
	var s *schema
	if shape != nil {
		s = schemaOf(reflect.TypeOf(shape))
	}
	return checkJSON(data, s, "$")
}

func checkJSON(data []byte, s *schema, where string) error {
	if !utf8.Valid(data) {
		return &JSONError{Where: where, Problem: "is not valid UTF-8", Unreadable: true}
	}
	// go-json-experiment's jsontext reads tokens without recursion and
	// without allocating for delimiters; duplicate names are left to
	// checkName, whose message says what is wrong.
	dec := jsontext.NewDecoder(bytes.NewReader(data), jsontext.AllowDuplicateNames(true))
	w := walker{dec: dec}
	root := &loc{name: where}
	if err := w.value(s, root, 0); err != nil {
		return err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return &JSONError{Where: where, Problem: "has data after the JSON value"}
	}
	return nil
}

// loc is where a value is, as a chain to its document: the path string is
// built only for an error.
type loc struct {
	parent *loc
	name   string // the root's name, or a member's
	index  int    // an array element's index (name "" and parent set)
	member bool
}

func (l *loc) String() string {
	if l.parent == nil {
		return l.name
	}
	if l.member {
		return memberPath(l.parent.String(), l.name)
	}
	return l.parent.String() + "[" + strconv.Itoa(l.index) + "]"
}

// walker reads one JSON document token by token.
type walker struct{ dec *jsontext.Decoder }

func (w walker) syntax(at *loc, err error) error {
	return &JSONError{Where: at.String(), Problem: "is not JSON: " + syntaxProblem(err), Unreadable: true}
}

func (w walker) value(s *schema, at *loc, depth int) error {
	tok, err := w.dec.ReadToken()
	if err != nil {
		return w.syntax(at, err)
	}
	k := tok.Kind()
	if k != '{' && k != '[' {
		return nil
	}
	if depth >= MaxJSONDepth {
		return &JSONError{Where: at.String(), Problem: fmt.Sprintf("nests objects and arrays deeper than %d levels", MaxJSONDepth)}
	}
	if k == '[' {
		return w.array(s.elemOf(), at, depth+1)
	}
	return w.object(s, at, depth+1)
}

func (w walker) array(s *schema, at *loc, depth int) error {
	el := &loc{parent: at}
	for i := 0; w.dec.PeekKind() != ']'; i++ {
		if w.dec.PeekKind() == 0 {
			return w.end(at)
		}
		el.index = i
		if err := w.value(s, el, depth); err != nil {
			return err
		}
	}
	return w.end(at)
}

// object reads the members of an object whose '{' was read, and its '}'.
func (w walker) object(s *schema, at *loc, depth int) error {
	seen := names{exact: map[string]bool{}, folded: map[string]string{}}
	for w.dec.PeekKind() != '}' {
		kt, err := w.dec.ReadToken()
		if err != nil {
			return w.syntax(at, err)
		}
		k := kt.String()
		if err := s.checkName(k, seen, at.String); err != nil {
			return err
		}
		if err := w.value(s.member(k), &loc{parent: at, name: k, member: true}, depth); err != nil {
			return err
		}
	}
	return w.end(at)
}

func (w walker) end(at *loc) error {
	if _, err := w.dec.ReadToken(); err != nil {
		return w.syntax(at, err)
	}
	return nil
}

// names are the member names of one object read so far: as written, and
// by fold key.
type names struct {
	exact  map[string]bool
	folded map[string]string
}

// checkName refuses k in an object of schema s (seen holds the names so
// far): a name twice, a name that differs from another only in case
// (outside maps), a name that folds to a known field but is not it.
func (s *schema) checkName(k string, seen names, whereOf func() string) error {
	fk := foldKey(k)
	if seen.exact[k] {
		return &JSONError{Where: whereOf(), Member: shownName(k), Problem: "appears twice in one object (decoders keep different ones)"}
	}
	seen.exact[k] = true
	if prev, ok := seen.folded[fk]; ok && !s.isMap() {
		return &JSONError{Where: whereOf(), Member: shownName(k), Problem: fmt.Sprintf("and %q differ only in case (Go's decoder reads one for the other)", shownName(prev))}
	}
	seen.folded[fk] = k
	if want, ok := s.known(fk); ok && want != k {
		return &JSONError{Where: whereOf(), Member: shownName(k), Problem: fmt.Sprintf("is not spelled %q (Go's decoder reads it as that member, others do not)", want)}
	}
	return nil
}

func syntaxProblem(err error) string {
	var se *jsontext.SyntacticError
	truncated := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
	switch {
	case errors.As(err, &se) && truncated:
		return fmt.Sprintf("the file ends inside this value at byte %d (cut short?)", se.ByteOffset)
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.ByteOffset)
	case truncated:
		return "unexpected end"
	}
	return "invalid value"
}

// memberPath is where's member k as a JSON path: $.a.b, or $["a b"].
func memberPath(where, k string) string {
	plain := k != "" && strings.IndexFunc(k, func(r rune) bool {
		return !(r == '_' || r == '-' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	}) < 0
	if plain && len(k) <= maxShownName {
		return where + "." + k
	}
	return where + "[" + strconv.Quote(shownName(k)) + "]"
}

// shownName is a member name as errors quote it: at most 64 runes, on one
// line.
func shownName(k string) string {
	if utf8.RuneCountInString(k) > maxShownName {
		k = string([]rune(k)[:maxShownName]) + "…"
	}
	return diag.OneLine(k)
}

// foldKey maps s to one string for every spelling that differs only in
// case: each rune becomes the smallest of its Unicode simple-fold orbit
// (so "K", "k" and the Kelvin sign agree, as strings.EqualFold has it).
func foldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}

// schema is the shape of a Go type as encoding/json decodes it: a struct's
// member names (by fold key: Go matches them case-insensitively) and the
// shapes of their values, a map's or a slice's element shape.
type schema struct {
	names   map[string]string  // fold key -> the exact name
	members map[string]*schema // exact name -> its value's shape
	elem    *schema            // a slice's elements, a map's values
	mapped  bool               // a map: names are data, compared exactly
}

func (s *schema) isMap() bool { return s != nil && s.mapped }

func (s *schema) elemOf() *schema {
	if s == nil {
		return nil
	}
	return s.elem
}

func (s *schema) known(fk string) (string, bool) {
	if s == nil || s.names == nil {
		return "", false
	}
	n, ok := s.names[fk]
	return n, ok
}

func (s *schema) member(k string) *schema {
	switch {
	case s == nil:
		return nil
	case s.mapped:
		return s.elem
	}
	return s.members[k]
}

var (
	schemaMu    sync.Mutex
	schemaCache = map[reflect.Type]*schema{}
	unmarshaler = reflect.TypeFor[json.Unmarshaler]()
)

// schemaOf is the shape of t; nil for a type that decodes itself or a
// scalar.
func schemaOf(t reflect.Type) *schema {
	schemaMu.Lock()
	defer schemaMu.Unlock()
	return buildSchema(t)
}

func buildSchema(t reflect.Type) *schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := schemaCache[t]; ok {
		return s
	}
	if reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		s := &schema{}
		schemaCache[t] = s
		s.elem = buildSchema(t.Elem())
		return s
	case reflect.Map:
		s := &schema{mapped: true}
		schemaCache[t] = s
		s.elem = buildSchema(t.Elem())
		return s
	case reflect.Struct:
		s := &schema{names: map[string]string{}, members: map[string]*schema{}}
		schemaCache[t] = s
		addFields(s, t)
		return s
	}
	return nil
}

// addFields adds t's JSON members to s, those of embedded structs without
// a name of their own inline (as encoding/json does).
func addFields(s *schema, t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			addFields(s, ft)
			continue
		}
		if name == "" {
			name = f.Name
		}
		s.names[foldKey(name)] = name
		s.members[name] = buildSchema(f.Type)
	}
}

// The shapes of a record file, for CheckJSON.
type (
	// statementShape is an in-toto Statement v1 with gpuctl's predicate,
	// as protojson reads it.
	statementShape struct {
		Type          string          `json:"_type"`
		Subject       []subjectShape  `json:"subject"`
		PredicateType string          `json:"predicateType"`
		Predicate     *predicateShape `json:"predicate"`
	}
	predicateShape = Predicate
	subjectShape   struct {
		Name             string            `json:"name"`
		URI              string            `json:"uri"`
		Digest           map[string]string `json:"digest"`
		Content          string            `json:"content"`
		DownloadLocation string            `json:"downloadLocation"`
		MediaType        string            `json:"mediaType"`
		Annotations      map[string]any    `json:"annotations"`
	}
	// fileShape is the top of a record file: a DSSE envelope or a
	// Statement.
	fileShape struct {
		dsse.Envelope
		statementShape
	}
)

// protoNames are the other names protojson accepts for members of a
// Statement (a field's proto name beside its JSON name): refused as
// spellings of the JSON name.
var protoNames = map[string]string{"type": "_type", "predicate_type": "predicateType", "download_location": "downloadLocation", "media_type": "mediaType"}

var (
	fileSchema      = shapeWithProtoNames(fileShape{})
	statementSchema = shapeWithProtoNames(statementShape{})
)

func shapeWithProtoNames(v any) *schema {
	s := schemaOf(reflect.TypeOf(v))
	sub := s.members["subject"].elemOf()
	for alias, name := range protoNames {
		for _, t := range []*schema{s, sub} {
			if _, ok := t.members[name]; ok {
				t.names[foldKey(alias)] = name
			}
		}
	}
	return s
}
