package matrix

import (
	"fmt"
	"github.com/gpuctl/gpuctl/internal/cli"
	"github.com/spf13/cobra"
	osx "os"
)

func Check() { fmt.Println("x") }

var _ = osx.Getenv("HOME")
var _ = osx.Exit
var _ cobra.Command
var _ = cli.Main
