package cli

import (
	"errors"

	"github.com/gpuctl/gpuctl/internal/check"
	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/importer"
	"github.com/gpuctl/gpuctl/internal/rules"
)

// unknownFacts are the import's unknown values as the rules take them.
func unknownFacts(res *importer.Result) map[string]rules.Unknown {
	out := map[string]rules.Unknown{}
	for path, f := range res.UnknownFacts() {
		out[path] = rules.Unknown(f) // the same fields: a field added to one must be added to the other
	}
	return out
}

// notJudged are the facts of file that kept checks of res from being
// judged, for the report.
func notJudged(file string, res *check.Result) []render.NotJudged {
	var out []render.NotJudged
	for _, nj := range res.NotJudged() {
		out = append(out, render.NotJudged{File: file, Path: nj.Path, What: nj.What, Reason: nj.Reason, Hint: nj.Hint, Checks: nj.Checks, Deciding: nj.Deciding})
	}
	return out
}

// importLists is what the import of file left unknown and skipped; errMsg
// is why it gave no spec ("" when it gave one).
func importLists(file string, res *importer.Result, errMsg string) render.Import {
	im := render.Import{File: file, From: res.From, Unknown: []render.ImportUnknown{}, Skipped: []render.ImportSkipped{}, Error: errMsg}
	for _, u := range res.Unknowns {
		because := u.Because
		if because == nil {
			because = []string{}
		}
		im.Unknown = append(im.Unknown, render.ImportUnknown{Path: u.Path, What: u.What, Because: because, Reason: res.Why(u), Hint: u.Hint, Origin: position(u.Origin)})
	}
	for _, s := range res.Skipped {
		im.Skipped = append(im.Skipped, render.ImportSkipped{What: s.What, Reason: s.Reason, Origin: position(s.Origin)})
	}
	return im
}

func position(o importer.Origin) render.Position {
	return render.Position{File: o.File, Line: o.Line, Column: o.Column}
}

// noPools is the import's result when err says the import of a PATH found
// no GPU node pool; nil for any other error.
func noPools(err error) *importer.Result {
	var np *importer.NoPoolsError
	if errors.As(err, &np) {
		return np.Result
	}
	return nil
}
