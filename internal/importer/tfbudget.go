package importer

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Caps on evaluating Terraform and blueprint expressions. A configuration
// under review may be written by anyone who opens a pull request, so one
// line of HCL must not take the runner's memory or time: each cap is
// checked before the work it bounds where the arguments tell (a range, a
// product, a format width), else on each value as it is produced, and a
// cap that trips stops the import with an error at the file:line:column
// of the expression, naming the cap. Real configurations stay far below
// each: the Terraform gpuctl generates for 1,000 node pools evaluates in
// about 2 % of MaxEvalSteps (42,000 steps).
const (
	// MaxInstances is the most instances one count or for_each expands
	// to (a configuration with 1,000 node pools uses one each).
	MaxInstances = 10_000
	// MaxCollection is the most elements of one collection an expression
	// makes: range(), setproduct(), split(), a for expression's input.
	MaxCollection = 100_000
	// MaxValueNodes is the most values (elements, attributes and
	// primitives together) one evaluation or one function call produces
	// or takes: about 40 MB of memory at the most.
	MaxValueNodes = 200_000
	// MaxValueDepth is the deepest nesting of one value, as the spec's
	// YAML nests at most spec.MaxDepth levels.
	MaxValueDepth = 64
	// MaxStringBytes is the longest string an expression makes, in bytes:
	// the cap on a file read by file() (safefs.Template), so that any
	// file gpuctl reads fits.
	MaxStringBytes = 1 << 20
	// MaxValueBytes is the most string bytes in one value.
	MaxValueBytes = 16 << 20
	// MaxNesting is the deepest nesting of blocks, brackets, templates and
	// operators in one file or expression, checked by a scan of the tokens
	// before the file is parsed, so that neither the parser nor the
	// evaluator recurses deeper (a generated configuration nests about 8).
	MaxNesting = 256
	// MaxTokens is the most tokens the files and expressions of one
	// command hold together, estimated from their bytes before the lexer
	// runs (every punctuation byte and every start of a word counts one):
	// HCL's lexer and parser take about a microsecond and 400 bytes per
	// token, so 16 MiB of "1," would take tens of seconds and 6 GB. The
	// Terraform gpuctl generates for 1,000 GKE pools holds about 590,000;
	// for 1,000 EKS pools with EFA (32 interfaces a launch template) about
	// 1,660,000 (measured 2026-12-02: 2.6 s and 620 MiB on 2 cores).
	MaxTokens = 2_000_000
	// MaxRefDepth is the longest chain of references (a local that reads
	// a local that reads ...) evaluated one inside the other.
	MaxRefDepth = 500
	// MaxTemplateDepth is the most templatefile() calls rendered one
	// inside the other; a template that includes itself is refused first.
	MaxTemplateDepth = 8
	// MaxEvalSteps is the evaluation budget of one command, in steps: one
	// per expression evaluated and per function call, one per value a
	// function takes or makes, 1 + 4 per syntax node of its body for each
	// element a for or splat expression visits, one per 64 bytes of
	// string. Counted in steps, not time, so a result does not depend on
	// the machine's speed; spent in about a second.
	MaxEvalSteps = 2_000_000
	// forNodeWeight is the steps one syntax node of a for expression's
	// body costs per element: HCL's operators call functions of their own
	// (a + b is a cty function call), which the budget does not see.
	forNodeWeight = 4
)

// ctxEvery is how many steps pass between two looks at the command's
// context.
const ctxEvery = 4096

// budget is one command's evaluation budget and its first refusal, which
// stops the import. Functions and counters report into it, because HCL
// turns their errors into diagnostics whose text gpuctl does not show.
type budget struct {
	ctx    context.Context
	steps  int64
	tokens int   // estimated tokens read so far (MaxTokens)
	next   int64 // the step count of the next look at ctx
	// fatal is the first cap or refusal; placed is whether it carries its
	// position yet.
	fatal  error
	placed bool
}

func newBudget(ctx context.Context) *budget {
	if ctx == nil {
		ctx = context.Background()
	}
	return &budget{ctx: ctx, next: ctxEvery}
}

// err is the refusal that stoppedWhy evaluation, nil while none did.
func (b *budget) err() error { return b.fatal }

// add spends n steps. Errors: the budget is spent, or the context is done.
func (b *budget) add(n int64) error {
	if b.fatal != nil {
		return b.fatal
	}
	b.steps += n
	if b.steps > MaxEvalSteps {
		return b.fail(capErr("the evaluation budget of %d steps is spent (MaxEvalSteps)", MaxEvalSteps))
	}
	if b.steps >= b.next {
		b.next = b.steps + ctxEvery
		if err := b.ctx.Err(); err != nil {
			b.fatal, b.placed = fmt.Errorf("import stoppedWhy: %w", err), true
			return b.fatal
		}
	}
	return nil
}

// done is the context's error, wrapped, when it is done.
func (b *budget) done() error {
	if b.fatal == nil {
		if err := b.ctx.Err(); err != nil {
			b.fatal, b.placed = fmt.Errorf("import stoppedWhy: %w", err), true
		}
	}
	return b.fatal
}

// fail records err as the refusal (the first one wins) and returns it.
func (b *budget) fail(err error) error {
	if b.fatal == nil {
		b.fatal = err
	}
	return b.fatal
}

// place gives the refusal its position, once: the subject of the first
// error diagnostic of d when there is one, else rng (the expression being
// evaluated).
func (b *budget) place(d hcl.Diagnostics, rng hcl.Range) {
	if b.fatal == nil || b.placed {
		return
	}
	for _, x := range d {
		if x.Severity == hcl.DiagError && x.Subject != nil {
			rng = *x.Subject
			break
		}
	}
	b.fatal, b.placed = &posError{rng: rng, err: b.fatal}, true
}

// failAt records err at rng as the refusal.
func (b *budget) failAt(rng hcl.Range, err error) error {
	if b.fatal == nil {
		b.fatal, b.placed = &posError{rng: rng, err: err}, true
	}
	return b.fatal
}

// posError is an error at a position: FILE:LINE:COL: message.
type posError struct {
	rng hcl.Range
	err error
}

func (e *posError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %v", e.rng.Filename, e.rng.Start.Line, e.rng.Start.Column, e.err)
}

func (e *posError) Unwrap() error { return e.err }

// Position is where the error is: the file as its message names it and
// the 1-based line and column.
func (e *posError) Position() (file string, line, column int) {
	return e.rng.Filename, e.rng.Start.Line, e.rng.Start.Column
}

// ErrCap is an expression or file over one of the caps above.
var ErrCap = errors.New("over a cap on evaluation")

// capError names the cap a value or file is over; it wraps ErrCap.
type capError struct{ msg string }

func (e *capError) Error() string        { return e.msg }
func (e *capError) Is(target error) bool { return target == ErrCap }

func capErr(format string, args ...any) error {
	return &capError{msg: fmt.Sprintf(format, args...)}
}

// valueSize is the shape of a value: its values (nodes), string bytes and
// depth.
type valueSize struct {
	nodes, bytes int64
	depth        int
}

// steps is what handling a value of this size costs.
func (s valueSize) steps() int64 { return s.nodes + s.bytes/64 }

// measure walks v, stopping at the first cap it passes (the walk never
// goes deeper than MaxValueDepth nor further than MaxValueNodes). Errors
// name the cap.
// maxNumberBits is MaxNumberDigits as a binary exponent (log2(10) bits a
// digit).
const maxNumberBits = MaxNumberDigits * 3322 / 1000

// addString counts a string of n bytes into s.
func (s *valueSize) addString(n int64) error {
	s.bytes += n
	if n > MaxStringBytes {
		return capErr("a string of more than %d bytes (MaxStringBytes)", MaxStringBytes)
	}
	if s.bytes > MaxValueBytes {
		return capErr("a value of more than %d bytes of strings (MaxValueBytes)", MaxValueBytes)
	}
	return nil
}

// checkNumber refuses a known number past 1e±MaxNumberDigits.
func checkNumber(v cty.Value) error {
	if e := v.AsBigFloat().MantExp(nil); e > maxNumberBits || e < -maxNumberBits {
		return capErr("a number past 1e%d (MaxNumberDigits)", MaxNumberDigits)
	}
	return nil
}

func measure(v cty.Value) (valueSize, error) {
	var s valueSize
	err := measureInto(v, 1, &s)
	return s, err
}

func measureInto(v cty.Value, depth int, s *valueSize) error {
	s.nodes++
	if depth > s.depth {
		s.depth = depth
	}
	switch {
	case s.nodes > MaxValueNodes:
		return capErr("a value of more than %d values (MaxValueNodes)", MaxValueNodes)
	case depth > MaxValueDepth:
		return capErr("a value nested deeper than %d levels (MaxValueDepth)", MaxValueDepth)
	}
	v, _ = v.Unmark()
	if !v.IsKnown() || v.IsNull() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.Number:
		return checkNumber(v)
	case t == cty.String:
		return s.addString(int64(len(v.AsString())))
	case t.IsCollectionType() || t.IsObjectType() || t.IsTupleType():
		if n := v.LengthInt(); n > MaxCollection {
			return capErr("a collection of more than %d elements (MaxCollection)", MaxCollection)
		}
		for it := v.ElementIterator(); it.Next(); {
			_, el := it.Element()
			if err := measureInto(el, depth+1, s); err != nil {
				return err
			}
		}
	}
	return nil
}
