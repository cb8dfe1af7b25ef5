package importer

import "fmt"

func importBlueprint(b *builder, paths []string) error { return fmt.Errorf("blueprint: not yet") }
func importKarpenter(b *builder, paths []string) error { return fmt.Errorf("karpenter: not yet") }
