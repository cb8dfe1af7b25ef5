//go:build hostile

package hostile

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// The generators write the large inputs at test time (gen: lines), so the
// corpus commits none of them:
//
//	nest OUT N OPEN MID CLOSE [HEAD [TAIL]]  HEAD's content, OPEN N times, MID, CLOSE N times, TAIL's content
//	repeat OUT N PART [SEP]              PART's content N times, joined by SEP
//	pad OUT BYTES PART                   PART's content, then spaces up to BYTES bytes
//	records DIR N FIXTURE                N copies of a signed record fixture, DIR/node-I/record.dsse.json
//	record OUT VARIANT                   a record built from the fixtures (see records below)
//	fixture OUT NAME                     a copy of a record fixture (a key, a record)
//
// HEAD, TAIL and PART are files of the case in OUT's folder; MID, CLOSE,
// HEAD and TAIL may be - (none). In OPEN, MID, CLOSE and SEP, \n is a newline, \s a space and \t a tab.
func generate(work string, v vars, g []string) error {
	if len(g) < 2 {
		return fmt.Errorf("want GENERATOR OUT ...")
	}
	out := filepath.Join(work, filepath.FromSlash(g[1]))
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	var data []byte
	var err error
	dir := filepath.Dir(out)
	switch g[0] {
	case "nest":
		data, err = genNest(dir, g[2:])
	case "repeat":
		data, err = genRepeat(dir, g[2:])
	case "pad":
		data, err = genPad(dir, g[2:])
	case "records":
		return genRecords(out, v, g[2:])
	case "record":
		data, err = genRecord(v, g[2:])
	case "fixture":
		if len(g) != 3 {
			return fmt.Errorf("fixture OUT NAME")
		}
		data, err = os.ReadFile(filepath.Join(v.fixtures, g[2]))
	default:
		return fmt.Errorf("unknown generator %q", g[0])
	}
	if err != nil {
		return err
	}
	return os.WriteFile(out, data, 0o644)
}

func unescape(s string) string {
	return strings.NewReplacer(`\n`, "\n", `\s`, " ", `\t`, "\t").Replace(s)
}

// part is the content of a file of the case, named relative to the
// folder of the generated file (empty for "-" or none).
func part(dir string, args []string, i int) ([]byte, error) {
	if i >= len(args) || args[i] == "-" {
		return nil, nil
	}
	return os.ReadFile(filepath.Join(dir, filepath.FromSlash(args[i])))
}

func count(s string) (int, error) {
	n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a count", s)
	}
	return n, nil
}

func genNest(dir string, a []string) ([]byte, error) {
	if len(a) < 4 {
		return nil, fmt.Errorf("nest OUT N OPEN MID CLOSE [HEAD [TAIL]]")
	}
	n, err := count(a[0])
	if err != nil {
		return nil, err
	}
	head, err := part(dir, a, 4)
	if err != nil {
		return nil, err
	}
	tail, err := part(dir, a, 5)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(head)
	b.WriteString(strings.Repeat(unescape(a[1]), n))
	if a[2] != "-" {
		b.WriteString(unescape(a[2]))
	}
	if a[3] != "-" {
		b.WriteString(strings.Repeat(unescape(a[3]), n))
	}
	b.Write(tail)
	return b.Bytes(), nil
}

func genRepeat(dir string, a []string) ([]byte, error) {
	if len(a) < 2 {
		return nil, fmt.Errorf("repeat OUT N PART [SEP]")
	}
	n, err := count(a[0])
	if err != nil {
		return nil, err
	}
	p, err := part(dir, a, 1)
	if err != nil {
		return nil, err
	}
	sep := ""
	if len(a) > 2 {
		sep = unescape(a[2])
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = string(p)
	}
	return []byte(strings.Join(parts, sep)), nil
}

func genPad(dir string, a []string) ([]byte, error) {
	if len(a) != 2 {
		return nil, fmt.Errorf("pad OUT BYTES PART")
	}
	n, err := count(a[0])
	if err != nil {
		return nil, err
	}
	p, err := part(dir, a, 1)
	if err != nil {
		return nil, err
	}
	if len(p) < n {
		p = append(p, bytes.Repeat([]byte(" "), n-len(p))...)
	}
	return p, nil
}

func genRecords(dir string, v vars, a []string) error {
	if len(a) != 2 {
		return fmt.Errorf("records DIR N FIXTURE")
	}
	n, err := count(a[0])
	if err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(v.fixtures, a[1]))
	if err != nil {
		return err
	}
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("node-%04d", i), "record.dsse.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// fixtureRecord is a record fixture: its envelope and its statement.
type fixtureRecord struct {
	env  map[string]any
	stmt map[string]any
}

func loadFixture(v vars, name string) (*fixtureRecord, error) {
	data, err := os.ReadFile(filepath.Join(v.fixtures, name))
	if err != nil {
		return nil, err
	}
	f := &fixtureRecord{}
	if err := json.Unmarshal(data, &f.env); err != nil {
		return nil, err
	}
	payload, err := base64.StdEncoding.DecodeString(f.env["payload"].(string))
	if err != nil {
		return nil, err
	}
	return f, json.Unmarshal(payload, &f.stmt)
}

// predicate is the statement's predicate.
func (f *fixtureRecord) predicate() map[string]any { return f.stmt["predicate"].(map[string]any) }

// passAll sets the verdict and every stage to PASS: a hand-edited record.
func (f *fixtureRecord) passAll() {
	p := f.predicate()
	p["verdict"] = "PASS"
	for _, s := range p["stages"].([]any) {
		s.(map[string]any)["verdict"] = "PASS"
	}
}

func (f *fixtureRecord) statementJSON() []byte {
	b, _ := json.Marshal(f.stmt)
	return b
}

// sign is a DSSE envelope of payload signed with the fixtures' test key.
func sign(v vars, payload []byte) ([]byte, error) {
	return json.Marshal(signedEnvelope(v, payload))
}

func signedEnvelope(v vars, payload []byte) map[string]any {
	const typ = "application/vnd.in-toto+json"
	sig, keyid := signPAE(v, typ, payload)
	return map[string]any{
		"payloadType": typ,
		"payload":     base64.StdEncoding.EncodeToString(payload),
		"signatures":  []any{map[string]any{"keyid": keyid, "sig": sig}},
	}
}

// signPAE signs DSSE's pre-authentication encoding of typ and payload with
// test.key; the key id is the sha256 of the public key's DER, as accept
// writes it.
func signPAE(v vars, typ string, payload []byte) (sig, keyid string) {
	pemData, err := os.ReadFile(filepath.Join(v.fixtures, "test.key"))
	if err != nil {
		panic(err)
	}
	blk, _ := pem.Decode(pemData)
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		panic(err)
	}
	priv := k.(ed25519.PrivateKey)
	pae := fmt.Sprintf("DSSEv1 %d %s %d %s", len(typ), typ, len(payload), payload)
	der, _ := x509.MarshalPKIXPublicKey(priv.Public())
	sum := sha256.Sum256(der)
	return base64.StdEncoding.EncodeToString(ed25519.Sign(priv, []byte(pae))), fmt.Sprintf("%x", sum)
}

// genRecord builds one record variant:
//
//	forged       the FAIL fixture edited to PASS, its signature kept
//	unsigned     the FAIL fixture's statement edited to PASS, no envelope
//	disagree     an unsigned statement whose verdict is PASS while its nccl stage FAILs
//	disagree-signed  the same, signed with the test key
//	case-payload {"payload": unsigned FAIL, "PAYLOAD": the signed PASS payload, "signatures": ...}
//	case-signatures  the PASS envelope with "Signatures" beside "signatures" (an empty list)
//	dup-verdict  a signed statement with "verdict" twice in the predicate (FAIL, then PASS)
//	case-verdict a signed statement with "Verdict": "PASS" after "verdict": "FAIL"
//	dup-type     a signed statement with "predicateType" twice
//	trailing     the PASS envelope followed by a second JSON value
//	trailing-payload a signed payload with a second JSON value after the statement
//	deep-envelope    an envelope whose signatures nest 100,000 arrays deep
//	deep-payload     a signed payload whose predicate nests 100,000 arrays deep
func genRecord(v vars, a []string) ([]byte, error) {
	if len(a) != 1 {
		return nil, fmt.Errorf("record OUT VARIANT")
	}
	pass, err := loadFixture(v, "h100-pass.dsse.json")
	if err != nil {
		return nil, err
	}
	fail, err := loadFixture(v, "h100-nccl-fail.dsse.json")
	if err != nil {
		return nil, err
	}
	if b, ok := unsignedVariant(a[0], pass, fail); ok {
		return b, nil
	}
	return signedVariant(v, a[0], pass, fail)
}

func unsignedVariant(name string, pass, fail *fixtureRecord) ([]byte, bool) {
	switch name {
	case "forged":
		fail.passAll()
		fail.env["payload"] = base64.StdEncoding.EncodeToString(fail.statementJSON())
		b, _ := json.Marshal(fail.env)
		return b, true
	case "unsigned":
		fail.passAll()
		return fail.statementJSON(), true
	case "disagree":
		fail.predicate()["verdict"] = "PASS"
		return fail.statementJSON(), true
	case "case-payload":
		b := fmt.Sprintf(`{"payloadType": %q, "payload": %q, "PAYLOAD": %q, "signatures": %s}`,
			pass.env["payloadType"], base64.StdEncoding.EncodeToString(fail.statementJSON()), pass.env["payload"], mustJSON(pass.env["signatures"]))
		return []byte(b), true
	case "case-signatures":
		b := fmt.Sprintf(`{"payloadType": %q, "payload": %q, "signatures": %s, "Signatures": []}`,
			pass.env["payloadType"], pass.env["payload"], mustJSON(pass.env["signatures"]))
		return []byte(b), true
	case "trailing":
		b, _ := json.Marshal(pass.env)
		return append(b, []byte("\n{\"payload\": \"e30=\"}\n")...), true
	case "deep-envelope":
		b := fmt.Sprintf(`{"payloadType": %q, "payload": %q, "signatures": %s%s}`,
			pass.env["payloadType"], pass.env["payload"], strings.Repeat("[", 100_000), strings.Repeat("]", 100_000))
		return []byte(b), true
	}
	return nil, false
}

func signedVariant(v vars, name string, pass, fail *fixtureRecord) ([]byte, error) {
	var payload string
	switch name {
	case "disagree-signed":
		fail.predicate()["verdict"] = "PASS"
		payload = string(fail.statementJSON())
	case "dup-verdict":
		payload = fail.withPredicateMembers(`"verdict":"FAIL","verdict":"PASS"`)
	case "case-verdict":
		payload = fail.withPredicateMembers(`"verdict":"FAIL","Verdict":"PASS"`)
	case "dup-type":
		payload = strings.Replace(string(fail.statementJSON()), `"predicateType":`, `"predicateType":"https://example.com/other","predicateType":`, 1)
	case "trailing-payload":
		payload = string(fail.statementJSON()) + "\n" + string(pass.statementJSON())
	case "deep-payload":
		payload = fail.withPredicateMembers(`"verdict":"FAIL","deep":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000))
	default:
		return nil, fmt.Errorf("unknown record variant %q", name)
	}
	return sign(v, []byte(payload))
}

// withPredicateMembers is the statement as JSON text with the predicate's
// verdict replaced by members, written as given (first in the predicate).
func (f *fixtureRecord) withPredicateMembers(members string) string {
	p := f.predicate()
	delete(p, "verdict")
	pred := mustJSON(p)
	f.stmt["predicate"] = "@@predicate@@"
	st := string(f.statementJSON())
	return strings.Replace(st, `"@@predicate@@"`, "{"+members+","+pred[1:], 1)
}

func mustJSON(x any) string {
	b, _ := json.Marshal(x)
	return string(b)
}

// setup runs one setup line in work.
func setup(bin, work string, env []string, v vars, s []string) error {
	if len(s) < 2 {
		return fmt.Errorf("want ACTION NAME ...")
	}
	for i := range s {
		s[i] = v.expand(s[i])
	}
	p := filepath.Join(work, filepath.FromSlash(s[1]))
	switch {
	case s[0] == "symlink" && len(s) == 4 && s[2] == "->":
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.Symlink(s[3], p)
	case s[0] == "mkfifo" && len(s) == 2:
		return syscall.Mkfifo(p, 0o644)
	case s[0] == "mkdir" && len(s) == 2:
		return os.MkdirAll(p, 0o755)
	case s[0] == "rm" && len(s) == 2:
		return os.RemoveAll(p)
	case s[0] == "append" && len(s) >= 3:
		return appendLine(p, strings.Join(s[2:], " "))
	case s[0] == "run":
		cmd := exec.Command(bin, s[1:]...)
		cmd.Dir, cmd.Env = work, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		return nil
	}
	return fmt.Errorf("unknown setup %q", strings.Join(s, " "))
}

func appendLine(p, line string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(unescape(line) + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// snapshot is the sha256 of every regular file under dir (links are not
// followed, FIFOs not opened).
func snapshot(dir string) (map[string][32]byte, error) {
	m := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m[p] = sha256.Sum256(data)
		return nil
	})
	return m, err
}

// changedFiles is the content of every regular file under dir that is new
// or changed since before, by its path relative to dir.
func changedFiles(dir string, before map[string][32]byte) (map[string][]byte, error) {
	after, err := snapshot(dir)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for p, sum := range after {
		if old, ok := before[p]; ok && old == sum {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = data
	}
	return out, nil
}
