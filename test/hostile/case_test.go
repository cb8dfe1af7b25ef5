//go:build hostile

package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/txtar"
)

// hostileCase is one archive of cases/: its header and its files.
type hostileCase struct {
	name   string   // KIND/NAME, from the archive's path under cases/
	args   []string // gpuctl's arguments
	setup  [][]string
	gens   [][]string
	exits  []int
	trust  *regexp.Regexp // report: the data-trust the page must give the record
	where  *regexp.Regexp // the message must match it; nil: a path of the case
	absent []string
	refuse []*regexp.Regexp // no output or file written may match one
	keep   []string         // files that must still exist afterwards
	files  []txtar.File
}

// vars are the placeholders of a case's files, args and setup lines.
type vars struct{ secret, work, fixtures string }

func (v vars) expand(s string) string {
	return strings.NewReplacer("$SECRET", v.secret, "$WORK", v.work, "$FIXTURES", v.fixtures).Replace(s)
}

// loadCase parses the archive at path (cases/KIND/NAME.txtar).
func loadCase(path string) (*hostileCase, error) {
	ar, err := txtar.ParseFile(path)
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel("cases", path)
	c := &hostileCase{name: strings.TrimSuffix(filepath.ToSlash(rel), ".txtar")}
	var header []byte
	for _, f := range ar.Files {
		if f.Name == "case" {
			header = f.Data
			continue
		}
		c.files = append(c.files, f)
	}
	if header == nil {
		return nil, fmt.Errorf("%s: no -- case -- section", path)
	}
	for i, line := range strings.Split(string(header), "\n") {
		if err := c.headerLine(strings.TrimSpace(line)); err != nil {
			return nil, fmt.Errorf("%s: case line %d: %v", path, i+1, err)
		}
	}
	if len(c.args) == 0 || len(c.exits) == 0 {
		return nil, fmt.Errorf("%s: a case needs args: and expect:", path)
	}
	return c, nil
}

// headerLine reads one line of the case header.
func (c *hostileCase) headerLine(line string) error {
	if line == "" || strings.HasPrefix(line, "#") {
		return nil
	}
	key, val, ok := strings.Cut(line, ":")
	if !ok {
		return fmt.Errorf("%q: want KEY: VALUE", line)
	}
	val = strings.TrimSpace(val)
	var err error
	switch key {
	case "args":
		c.args = strings.Fields(val)
	case "setup":
		c.setup = append(c.setup, strings.Fields(val))
	case "gen":
		c.gens = append(c.gens, strings.Fields(val))
	case "expect":
		err = c.expect(val)
	case "where":
		c.where, err = regexp.Compile(val)
	case "absent":
		c.absent = append(c.absent, val)
	case "refuse":
		var re *regexp.Regexp
		re, err = regexp.Compile(val)
		c.refuse = append(c.refuse, re)
	case "keep":
		c.keep = append(c.keep, val)
	default:
		err = fmt.Errorf("unknown key %q", key)
	}
	return err
}

// expect reads "exit 2|3" or "exit 0 trust unsigned|unverified".
func (c *hostileCase) expect(val string) error {
	f := strings.Fields(val)
	if len(f) < 2 || f[0] != "exit" {
		return fmt.Errorf("expect %q: want exit CODES [trust VALUES]", val)
	}
	for _, s := range strings.Split(f[1], "|") {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("expect %q: %v", val, err)
		}
		c.exits = append(c.exits, n)
	}
	switch {
	case len(f) == 2:
		return nil
	case len(f) == 4 && f[2] == "trust":
		c.trust = regexp.MustCompile(`data-trust="(` + strings.ReplaceAll(regexp.QuoteMeta(f[3]), `\|`, "|") + `)"`)
		return nil
	}
	return fmt.Errorf("expect %q: want exit CODES [trust VALUES]", val)
}

// extract writes the case's files under dir, placeholders expanded.
func (c *hostileCase) extract(dir string, v vars) error {
	for _, f := range c.files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(v.expand(string(f.Data))), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// defaultWhere matches a message that names a path of the case: a file of
// the archive, a generated or set-up file, or an argument that is a path,
// optionally with :line:col.
func (c *hostileCase) defaultWhere() *regexp.Regexp {
	var alts []string
	add := func(p string) {
		if p == "" || strings.HasPrefix(p, "-") {
			return
		}
		alts = append(alts, regexp.QuoteMeta(filepath.Base(p)))
	}
	for _, f := range c.files {
		add(f.Name)
	}
	for _, g := range c.gens {
		if len(g) > 1 {
			add(g[1])
		}
	}
	for _, s := range c.setup {
		if len(s) > 1 && s[0] != "run" {
			add(s[1])
		}
	}
	for _, a := range c.args[1:] {
		if strings.ContainsAny(a, "/.") {
			add(a)
		}
	}
	alts = append(alts, `[\w.-]+:\d+:\d+`)
	return regexp.MustCompile(strings.Join(alts, "|"))
}
