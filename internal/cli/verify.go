package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/cli/render"
	"github.com/gpuctl/gpuctl/internal/record"
	"github.com/gpuctl/gpuctl/internal/safefs"
)

type verifyOptions struct {
	streams     *IOStreams
	key         string
	evidenceDir string
	previous    string
	out         *outputFlag
}

func newVerifyCommand(streams *IOStreams) *cobra.Command {
	o := &verifyOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "verify RECORD --key PUB",
		Short: "Verify a signed acceptance record (and its evidence)",
		Long: `Verify an acceptance record written by 'gpuctl accept': the DSSE signature
with the public key, that the payload is an in-toto Statement v1 with predicate
type ` + record.PredicateType + `, that its subject (node/NAME and the
sha256 over the GPUs' UUIDs and serials) matches the predicate, and, with
--evidence-dir, that every evidence file has the recorded size and sha256,
and, with --previous PREV, that the record's previous.digest is the sha256 of
PREV (the chain of a node's records).

Exit 0 when everything holds, 3 with the list of what failed. The record's own
verdict (PASS/FAIL/INCONCLUSIVE) does not change the exit code.

` + ExitCodeHelp,
		Example: `  gpuctl verify gpuctl-evidence/gpu-node-1/20261129t154400-a1b2/record.dsse.json --key gpuctl.pub
  gpuctl verify record.dsse.json --key gpuctl.pub --evidence-dir gpuctl-evidence/gpu-node-1/20261129t154400-a1b2
  gpuctl verify record.dsse.json --key gpuctl.pub --previous gpuctl-evidence/gpu-node-1/20261128t101500-c3d4/record.dsse.json`,
		Args: exactArgs(1, "one RECORD file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.out.validate(); err != nil {
				return err
			}
			return o.run(cmd, args[0])
		},
	}
	cmd.Flags().StringVar(&o.key, "key", "", "public key (PEM) of the signer (required)")
	cmd.Flags().StringVar(&o.evidenceDir, "evidence-dir", "", "also check the hashes of the evidence files in this directory")
	cmd.Flags().StringVar(&o.previous, "previous", "", "the node's previous record: check that RECORD links it (previous.digest)")
	o.out = addOutputFlag(cmd, "table", "table", "json").alias("text", "table")
	return cmd
}

func (o *verifyOptions) run(cmd *cobra.Command, path string) error {
	if o.key == "" {
		return usageErrorf("--key PUB is required")
	}
	ctx := cmd.Context()
	verifier, err := loadPublicKey(ctx, o.key, "verify")
	if err != nil {
		return err
	}
	rec, err := readContext(ctx, func() ([]byte, error) { return safefs.ReadFile(path, record.FileKind) })
	if err != nil {
		return readError("reading record", err)
	}
	if o.evidenceDir != "" {
		if st, err := os.Stat(o.evidenceDir); err != nil || !st.IsDir() {
			return usageErrorf("--evidence-dir %s is not a directory", o.evidenceDir)
		}
	}
	v, err := verifyRecord(ctx, path, rec, verifier, o.evidenceDir)
	if err != nil {
		return err
	}
	if err := o.checkPrevious(ctx, v); err != nil {
		return err
	}
	if err := o.write(newVerification(path, v, o.evidenceDir != "")); err != nil {
		return err
	}
	if !v.OK() {
		return silentExit(ExitCheckFailed)
	}
	return nil
}

// loadPublicKey reads the public key (PEM) at path for command ("verify",
// "report"). A private key, or a key of another algorithm, is a usage
// error.
func loadPublicKey(ctx context.Context, path, command string) (dsse.Verifier, error) {
	pemBytes, err := readContext(ctx, func() ([]byte, error) { return safefs.ReadFile(path, safefs.Key) })
	if err != nil {
		return nil, readError("reading key", err)
	}
	if isPrivateKeyPEM(pemBytes) {
		return nil, usageErrorf("--key %s is a private key; %s takes the public key (PREFIX.pub from gpuctl keygen)", path, command)
	}
	v, err := record.LoadSignerVerifier(pemBytes)
	if err != nil {
		return nil, usageErrorf("%s: %v", path, err)
	}
	return v, nil
}

// verifyRecord is record.Verify of the record read from path, with its
// errors as exit codes: a malformed record is bad input (2), a record that
// cannot be checked at all failed (3).
func verifyRecord(ctx context.Context, path string, rec []byte, verifier dsse.Verifier, evidenceDir string) (*record.Verification, error) {
	v, err := record.Verify(ctx, rec, verifier, evidenceDir)
	switch {
	case errors.Is(err, context.Canceled):
		return nil, err
	case errors.Is(err, record.ErrRecordFormat):
		return nil, withCode(ExitUsage, fmt.Errorf("%s: %w", path, err))
	case err != nil:
		return nil, withCode(ExitCheckFailed, fmt.Errorf("%s: %w", path, err))
	}
	return v, nil
}

// checkPrevious adds to v the problems of --previous: the record must
// link that file by its digest.
func (o *verifyOptions) checkPrevious(ctx context.Context, v *record.Verification) error {
	if o.previous == "" || v.Predicate == nil {
		return nil
	}
	prev, err := readContext(ctx, func() ([]byte, error) { return safefs.ReadFile(o.previous, record.FileKind) })
	if err != nil {
		return readError("reading --previous", err)
	}
	v.Problems = append(v.Problems, accept.CheckPrevious(v.Predicate, record.Digest(prev))...)
	return nil
}

func (o *verifyOptions) write(rv *render.Verification) error {
	if o.out.value == "json" {
		return render.JSON(o.streams.Out, rv)
	}
	return render.VerificationText(o.streams.Out, rv)
}

// newVerification summarises a verification of the record at path.
func newVerification(path string, v *record.Verification, evidence bool) *render.Verification {
	r := &render.Verification{APIVersion: "gpuctl.dev/v1", Kind: "RecordVerification", Record: path, OK: v.OK(), Problems: append([]string{}, v.Problems...), KeyID: v.KeyID,
		Stages: []render.VerificationStage{}}
	if v.Statement != nil && len(v.Statement.Subject) > 0 {
		r.Subject, r.Digest = v.Statement.Subject[0].Name, v.Statement.Subject[0].Digest["sha256"]
	}
	if p := v.Predicate; p != nil {
		r.RunID, r.Verdict = p.RunID, string(p.Verdict)
		for _, s := range p.Stages {
			r.Stages = append(r.Stages, render.VerificationStage{Name: string(s.Name), Verdict: string(s.Verdict), Reason: s.Reason})
		}
		r.Template = record.Template(p)
		if b := p.EvidenceBundle; b != nil {
			r.EvidenceURI = b.URI
		}
		if evidence {
			for _, s := range p.Stages {
				r.EvidenceChecked += len(s.Evidence)
			}
		}
	}
	return r
}
