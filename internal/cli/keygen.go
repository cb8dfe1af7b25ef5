package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/gpuctl/gpuctl/internal/record"
)

type keygenOptions struct {
	streams *IOStreams
	alg     string
	prefix  string
	force   bool
}

func newKeygenCommand(streams *IOStreams) *cobra.Command {
	o := &keygenOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "keygen",
		Short: "Write a key pair for signing acceptance records",
		Long: `Write a new key pair for signing acceptance records: PREFIX.key (PKCS #8 PEM,
mode 0600) and PREFIX.pub (PKIX PEM). Sign with 'gpuctl accept --key PREFIX.key';
verify with 'gpuctl verify RECORD --key PREFIX.pub'.

` + ExitCodeHelp,
		Example: `  gpuctl keygen                       # gpuctl.key + gpuctl.pub, Ed25519
  gpuctl keygen --type ecdsa-p256 --out /secure/accept`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context())
		},
	}
	cmd.Flags().StringVar(&o.alg, "type", record.KeyEd25519, "key type: ed25519|ecdsa-p256")
	cmd.Flags().StringVar(&o.prefix, "out", "gpuctl", "path prefix of the files PREFIX.key and PREFIX.pub")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite existing files")
	return cmd
}

// keyFile is one file of the pair keygen writes.
type keyFile struct {
	path string
	data []byte
	mode os.FileMode
}

func (o *keygenOptions) run(ctx context.Context) error {
	if o.alg != record.KeyEd25519 && o.alg != record.KeyECDSAP256 {
		return usageErrorf("--type %q: want %s or %s", o.alg, record.KeyEd25519, record.KeyECDSAP256)
	}
	priv, pub, err := record.GenerateKey(o.alg)
	if err != nil {
		return err
	}
	keyPath, pubPath := o.prefix+".key", o.prefix+".pub"
	files := []keyFile{{keyPath, priv, 0o600}, {pubPath, pub, 0o644}}
	write := writeNewKeyFiles
	if o.force {
		write = replaceKeyFiles
	}
	if err := write(ctx, files); err != nil {
		return err
	}
	fmt.Fprintf(o.streams.ErrOut, "wrote %s (private, 0600) and %s (public), %s\n", keyPath, pubPath, o.alg)
	return nil
}

// replaceKeyFiles writes files over what is there (--force): never through
// a link (it could point at any file the user may write), and through a
// file renamed into place, so an interrupted keygen leaves the old pair or
// the new one.
func replaceKeyFiles(ctx context.Context, files []keyFile) error {
	for _, f := range files {
		if st, err := os.Lstat(f.path); err == nil && st.Mode()&os.ModeSymlink != 0 {
			return withCode(ExitUsage, fmt.Errorf("%s %w", f.path, errSymlink))
		}
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := writeFileAtomic(f.path, f.data, f.mode); err != nil {
			return err
		}
	}
	return nil
}

// writeNewKeyFiles creates files, refusing one that exists (exit 2: use
// --force).
func writeNewKeyFiles(ctx context.Context, files []keyFile) error {
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := createKeyFile(f); err != nil {
			return err
		}
	}
	return nil
}

// createKeyFile creates f exclusively with its mode (also when the umask
// would give it other bits) and writes it.
func createKeyFile(f keyFile) error {
	fh, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
	if errors.Is(err, os.ErrExist) {
		return usageErrorf("%s exists (use --force to overwrite)", f.path)
	}
	if err != nil {
		return err
	}
	if err := fh.Chmod(f.mode); err != nil { // also when it existed with other bits
		fh.Close()
		return err
	}
	if _, err := fh.Write(f.data); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
