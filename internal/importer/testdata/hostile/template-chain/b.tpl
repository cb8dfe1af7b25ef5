b ${templatefile("a.tpl", {})}
