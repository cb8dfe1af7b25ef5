${templatefile("self.tpl", {})}
