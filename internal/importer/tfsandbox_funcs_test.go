package importer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/gpuctl/gpuctl/internal/safefs"
)

// evalFn evaluates expression src with a sandbox over a root folder named
// "repo" whose configuration is in "repo/tests/eks"; it returns the value
// as JSON, or the error text.
func evalFn(t *testing.T, src string) (string, error) {
	t.Helper()
	base := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(filepath.Join(base, "tests", "eks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "tests", "eks", "team.txt"), []byte("ml"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := safefs.OpenRoot(base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	sb := newSandbox(Options{root: root}, filepath.Join(base, "tests", "eks"), newBudget(context.Background()))
	x, d := hclsyntax.ParseExpression([]byte(src), "t.tf", hcl.InitialPos)
	if d.HasErrors() {
		t.Fatalf("%s: %s", src, d.Error())
	}
	instrument(x)
	v, d := x.Value(&hcl.EvalContext{Functions: sb.funcs, Variables: map[string]cty.Value{
		"path": cty.ObjectVal(map[string]cty.Value{"cwd": cty.StringVal(sb.cwd()), "module": cty.StringVal(".")}),
	}})
	if d.HasErrors() {
		return "", d
	}
	if !v.IsWhollyKnown() {
		return "(unknown)", nil
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		t.Fatal(err)
	}
	return string(b), nil
}

// TestFunctionsDocumented: each function added for Terraform 1.11 gives
// the results of the examples on its page,
// https://developer.hashicorp.com/terraform/language/functions/NAME
// (2026-12-02).
func TestFunctionsDocumented(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{`basename("foo/bar/baz.txt")`, `"baz.txt"`},
		{`dirname("foo/bar/baz.txt")`, `"foo/bar"`},
		{`"ex-${basename(path.cwd)}"`, `"ex-eks"`},
		{`abspath(path.module)`, `"/repo/tests/eks"`},
		{`abspath("../x")`, `"/repo/tests/x"`},
		{`file("${path.cwd}/team.txt")`, `"ml"`},
		{`pathexpand("/etc/resolv.conf")`, `"/etc/resolv.conf"`},
		{`cidrhost("10.12.112.0/20", 16)`, `"10.12.112.16"`},
		{`cidrhost("10.12.112.0/20", 268)`, `"10.12.113.12"`},
		{`cidrhost("fd00:fd12:3456:7890:00a2::/72", 34)`, `"fd00:fd12:3456:7890::22"`},
		{`cidrhost("10.0.0.0/24", -2)`, `"10.0.0.254"`},
		{`cidrnetmask("172.16.0.0/12")`, `"255.240.0.0"`},
		{`cidrsubnet("172.16.0.0/12", 4, 2)`, `"172.18.0.0/16"`},
		{`cidrsubnet("10.1.2.0/24", 4, 15)`, `"10.1.2.240/28"`},
		{`cidrsubnet("fd00:fd12:3456:7890::/56", 16, 162)`, `"fd00:fd12:3456:7800:a200::/72"`},
		{`cidrsubnets("10.1.0.0/16", 4, 4, 8, 4)`, `["10.1.0.0/20","10.1.16.0/20","10.1.32.0/24","10.1.48.0/20"]`},
		{`cidrsubnets("fd00:fd12:3456:7890::/56", 16, 16, 16, 32)`, `["fd00:fd12:3456:7800::/72","fd00:fd12:3456:7800:100::/72","fd00:fd12:3456:7800:200::/72","fd00:fd12:3456:7800:300::/88"]`},
		{`alltrue(["true", true])`, `true`},
		{`alltrue([true, false])`, `false`},
		{`alltrue([])`, `true`},
		{`anytrue(["true"])`, `true`},
		{`anytrue([true, false])`, `true`},
		{`anytrue([])`, `false`},
		{`sum([10, 13, 6, 4.5])`, `33.5`},
		{`one([])`, `null`},
		{`lookup({a = "ay", b = "bee"}, "a", "what?")`, `"ay"`},
		{`lookup({a = "ay", b = "bee"}, "c", "what?")`, `"what?"`},
		{`lookup({a = "ay"}, "c", null)`, `null`},
		{`lookup({a = "ay"}, "a", null)`, `"ay"`},
		{`lookup(tomap({a = "ay"}), "a", null)`, `"ay"`},
		{`one(["hello"])`, `"hello"`},
		{`one(toset(["a"]))`, `"a"`},
		{`startswith("hello world", "hello")`, `true`},
		{`startswith("hello world", "world")`, `false`},
		{`endswith("hello world", "world")`, `true`},
		{`strcontains("hello world", "wor")`, `true`},
		{`strcontains("hello world", "wod")`, `false`},
		{`transpose({"a" = ["1", "2"], "b" = ["2", "3"]})`, `{"1":["a"],"2":["a","b"],"3":["b"]}`},
		{`matchkeys(["i-123", "i-abc", "i-def"], ["us-west", "us-east", "us-east"], ["us-east"])`, `["i-abc","i-def"]`},
		{`urlencode("Hello World!")`, `"Hello+World%21"`},
		{`urlencode("☃")`, `"%E2%98%83"`},
		{`urlencode("foo:bar@localhost?foo=bar&bar=baz")`, `"foo%3Abar%40localhost%3Ffoo%3Dbar%26bar%3Dbaz"`},
		{`textencodebase64("Hello World", "UTF-16LE")`, `"SABlAGwAbABvACAAVwBvAHIAbABkAA=="`},
		{`textdecodebase64("SABlAGwAbABvACAAVwBvAHIAbABkAA==", "UTF-16LE")`, `"Hello World"`},
		{`startswith(base64gzip("hello"), "H4sIAAAAAAAA")`, `true`},
		{`md5("hello world")`, `"5eb63bbbe01eeed093cb22bb8f5acdc3"`},
		{`sha1("hello world")`, `"2aae6c35c94fcfb415dbe95f408b9ce91ee846ed"`},
		{`sha256("hello world")`, `"b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"`},
		{`sha512("hello world")`, `"309ecc489c12d6eb4cc40f50c902f2b4d0ed77ee511a7c7a9bcd3ca86d4cd86f989dd35bc5ff499670da34255b45b0cfd830e81f605dcf7dc5542e93ae9cd76f"`},
		{`base64sha256("hello world")`, `"uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="`},
		{`base64sha512("hello world")`, `"MJ7MSJwS1utMxA9QyQLytNDtd+5RGnx6m808qG1M2G+YndNbxf9JlnDaNCVbRbDP2DDoH2Bdz33FVC6TrpzXbw=="`},
		{`uuidv5("dns", "www.terraform.io")`, `"a5008fae-b28c-5ba5-96cd-82b4c53552d6"`},
		{`uuidv5("url", "https://www.terraform.io/")`, `"9db6f67c-dd95-5ea0-aa5b-e70e5c5f7cf5"`},
		{`uuidv5("oid", "1.3.6.1.4")`, `"af9d40a5-7a36-5c07-b23a-851cd99fbfa5"`},
		{`uuidv5("x500", "CN=Example,C=GB")`, `"84e09961-4aa4-57f8-95b7-03edb1073253"`},
		{`uuidv5("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.terraform.io")`, `"a5008fae-b28c-5ba5-96cd-82b4c53552d6"`},
		{`timecmp("2017-11-22T00:00:00Z", "2017-11-22T00:00:00Z")`, `0`},
		{`timecmp("2017-11-22T00:00:00Z", "2017-11-22T01:00:00Z")`, `-1`},
		{`timecmp("2017-11-22T01:00:00Z", "2017-11-22T00:00:00Z")`, `1`},
		{`timecmp("2017-11-22T01:00:00Z", "2017-11-22T00:00:00-01:00")`, `0`},
		{`nonsensitive(sensitive("x"))`, `"x"`},
		{`ephemeralasnull("x")`, `"x"`},
		{`replace("1 + 2 + 3", "+", "-")`, `"1 - 2 - 3"`},
		{`replace("hello world", "/w.*d/", "everybody")`, `"hello everybody"`},
		{`replace("10.0.0.0/20", "/[./]/", "-")`, `"10-0-0-0-20"`},
		{`length([])`, `0`},
		{`length(["a", "b"])`, `2`},
		{`length({"a" = "b"})`, `1`},
		{`length("hello")`, `5`},
		{`length({a = 1, b = [2]})`, `2`},
		{`templatestring("Hello, $${name}!", { name = "Jane" })`, `"Hello, Jane!"`},
	} {
		got, err := evalFn(t, c.expr)
		if err != nil || got != c.want {
			t.Errorf("%s = %s (%v), want %s", c.expr, got, err, c.want)
		}
	}
}

// TestFunctionsLater: the clock, randomness, a private key and provider
// functions are not evaluated; the error (which import turns into an
// unknown value) says why.
func TestFunctionsLater(t *testing.T) {
	for expr, why := range map[string]string{
		`timestamp()`:                     "timestamp() is known only when Terraform applies",
		`plantimestamp()`:                 "plantimestamp() is known only when Terraform plans",
		`uuid()`:                          "uuid() is known only when Terraform applies",
		`bcrypt("x")`:                     "bcrypt() is known only when Terraform applies",
		`pathexpand("~/.ssh/id_rsa")`:     "pathexpand(): a path from the home folder",
		`provider::aws::arn_parse("a:b")`: "provider::aws::arn_parse() is known only when Terraform runs its provider",
		`issensitive("x")`:                "issensitive() is not judged",
	} {
		_, err := evalFn(t, expr)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: error %v, want %q", expr, err, why)
		}
	}
}

// TestFunctionsRefuse: arguments outside a function's domain are errors.
func TestFunctionsRefuse(t *testing.T) {
	for _, expr := range []string{
		`sum([])`, `one(["a", "b"])`, `cidrsubnet("10.0.0.0/24", 9, 0)`, `cidrsubnet("10.0.0.0/24", 2, 4)`,
		`cidrhost("10.0.0.0/30", 4)`, `cidrnetmask("fd00::/8")`, `cidrsubnets("10.0.0.0/24", 1, 1, 1)`,
		`cidrhost("not a prefix", 1)`, `matchkeys(["a"], [], [])`, `timecmp("yesterday", "2017-11-22T00:00:00Z")`,
		`uuidv5("nope", "x")`, `textencodebase64("x", "NOT-AN-ENCODING")`, `file("/etc/passwd")`, `file("/repo/../x")`,
	} {
		if got, err := evalFn(t, expr); err == nil {
			t.Errorf("%s = %s, want an error", expr, got)
		}
	}
}
