package hclgen

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

// Guardrails: expressions in the generated Terraform that compare versions
// numerically, component by component, so that a hand edit of a variable
// that breaks compatibility fails at `terraform plan`. They replace the
// common hand-written check that compares "535.54.14" < "535.104.05" as
// strings (which says false) with arithmetic on the components.
//
// A version "A.B.C" is compared as the number A*10^12 + B*10^6 + C; missing
// components count as 0 and each component may have up to 6 digits, which
// the format validation enforces first.

// versionFormatRE is the Terraform regex a version variable must match.
const versionFormatRE = `^[0-9]{1,6}(\\.[0-9]{1,6}){0,2}$`

// The minimum drivers of CUDA minor-version compatibility per CUDA major
// version come from package matrix (matrix.MinorCompatFloors), with their
// source.

// versionNumberExpr is the HCL expression that turns the version held by the
// reference ref (e.g. "var.cuda_version") into its comparable number.
func versionNumberExpr(ref string) string {
	padded := `split(".", "${` + ref + `}.0.0")`
	return fmt.Sprintf("(tonumber(%[1]s[0]) * 1000000000000 + tonumber(%[1]s[1]) * 1000000 + tonumber(%[1]s[2]))", padded)
}

// versionNumber is the Go twin of versionNumberExpr for a constant version,
// written as an integer literal.
func versionNumber(v string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) == 0 || len(parts) > 3 {
		return "", fmt.Errorf("version %q: want 1 to 3 numeric components", v)
	}
	n := new(big.Int)
	for i := 0; i < 3; i++ {
		c := 0
		if i < len(parts) {
			var err error
			c, err = strconv.Atoi(parts[i])
			if err != nil || c < 0 || c > 999999 {
				return "", fmt.Errorf("version %q: component %q is not a number below 10^6", v, parts[i])
			}
		}
		n.Mul(n, big.NewInt(1000000))
		n.Add(n, big.NewInt(int64(c)))
	}
	return n.String(), nil
}

// isExactVersion reports whether s is a numeric dotted version such as
// "550.90.07" (as opposed to GKE's DEFAULT or LATEST).
func isExactVersion(s string) bool {
	_, err := versionNumber(s)
	return err == nil && s != ""
}

// versionFormatCondition is the validation condition of a version variable.
func versionFormatCondition(ref string) string {
	return fmt.Sprintf(`can(regex(%s, %s))`, "\""+versionFormatRE+"\"", ref)
}

// cudaFloorExpr is the minimum driver number for the CUDA major version in
// ref, from matrix.MinorCompatFloors; 0 for an unknown major (the
// cuda_version validation rejects those).
func cudaFloorExpr(ref string) string {
	floors, _, _ := matrix.MinorCompatFloors()
	var b strings.Builder
	b.WriteString("lookup({")
	for i, f := range floors {
		if i > 0 {
			b.WriteString(", ")
		}
		n, _ := versionNumber(f.Floor)
		fmt.Fprintf(&b, "%q = %s", strconv.Itoa(f.Major), n)
	}
	fmt.Fprintf(&b, `}, split(".", %s)[0], 0)`, ref)
	return b.String()
}

// cudaMajors are the CUDA major versions with a minor-compat floor, as
// strings ("11", "12", "13").
func cudaMajors() []string {
	floors, _, _ := matrix.MinorCompatFloors()
	var out []string
	for _, f := range floors {
		out = append(out, strconv.Itoa(f.Major))
	}
	return out
}

// cudaCompatSource is the source of the minor-compat floors.
func cudaCompatSource() string {
	_, src, _ := matrix.MinorCompatFloors()
	return src
}
