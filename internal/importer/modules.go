package importer

// module reads a module call of a module gpuctl knows; others are skipped.
func (t *tfImport) module(m *tfBlock) {
	t.b.skip(m.addr(), "module gpuctl does not import", rangeOrigin(m.rng))
}
