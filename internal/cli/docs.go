package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/gpuctl/gpuctl/internal/matrix"
)

// DocsDir is where `make docs` writes the reference: Markdown under it,
// man pages under DocsDir/man.
const DocsDir = "docs"

// writeDocs writes the command reference of root into dir: one Markdown
// page per command (dir/gpuctl_validate.md, ...) and one man page per
// command (dir/man/gpuctl-validate.1). The output depends only on the
// command tree and the matrix's date (the man pages' date), so that a test
// can tell whether the committed copy is current.
func writeDocs(root *cobra.Command, dir string) error {
	var disable func(c *cobra.Command)
	disable = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		for _, sub := range c.Commands() {
			disable(sub)
		}
	}
	disable(root)
	if err := os.MkdirAll(filepath.Join(dir, "man"), 0o755); err != nil {
		return err
	}
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return fmt.Errorf("markdown: %w", err)
	}
	date := matrix.DataDate()
	header := &doc.GenManHeader{Title: "GPUCTL", Section: "1", Source: "gpuctl", Manual: "gpuctl manual", Date: &date}
	if err := doc.GenManTree(root, header, filepath.Join(dir, "man")); err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}

func newDocsCommand(streams *IOStreams) *cobra.Command {
	out := DocsDir
	cmd := &cobra.Command{
		Use:    "docs",
		Short:  "Write the command reference (Markdown and man pages) generated from the command tree",
		Long:   "Write the command reference into --out: a Markdown page per command and, under man/, a man page per command. `make docs` runs it; a test fails when the committed docs/ differ from what it writes.",
		Hidden: true,
		Args:   noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := writeDocs(cmd.Root(), out); err != nil {
				return err
			}
			_, err := fmt.Fprintf(streams.ErrOut, "docs: wrote the reference under %s\n", out)
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", out, "folder to write the reference into")
	return cmd
}
