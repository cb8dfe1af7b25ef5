package importer

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/gpuctl/gpuctl/internal/diag"
)

// exprContext binds the references of e (the inside of $(...), src): vars
// resolved, module outputs unknown; why lists what is unknown.
func (bp *blueprint) exprContext(e hcl.Expression, src string, at Origin, depth int) (*hcl.EvalContext, []string, error) {
	varVals := map[string]cty.Value{}
	var why []string
	ctx := &hcl.EvalContext{Variables: map[string]cty.Value{}, Functions: bp.funcs}
	outputs := map[string]map[string]cty.Value{}
	for _, tr := range e.Variables() {
		root := tr.RootName()
		switch {
		case root == "vars":
			name := attrName(tr, 1)
			n, err := bp.varNode(name, at, depth+1)
			if err != nil {
				return nil, nil, err
			}
			varVals[name] = ctyOf(n)
			why = appendUnique(why, whyUnknown(n)...)
		case bp.modules[root]:
			out := attrName(tr, 1)
			if outputs[root] == nil {
				outputs[root] = map[string]cty.Value{}
			}
			outputs[root][out] = cty.DynamicVal
			why = appendUnique(why, fmt.Sprintf("output %s of module %s, known only after deployment", out, root))
		default:
			return nil, nil, fmt.Errorf("%s:%d: $(%s): %q is neither vars nor a module id of the blueprint", at.File, at.Line, diag.OneLine(src), root)
		}
	}
	ctx.Variables["vars"] = cty.ObjectVal(varVals)
	for id, outs := range outputs {
		ctx.Variables[id] = cty.ObjectVal(outs)
	}
	return ctx, why, nil
}
