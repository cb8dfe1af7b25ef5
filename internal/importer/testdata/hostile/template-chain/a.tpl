a ${templatefile("b.tpl", {})}
