package probe

import (
	"k8s.io/client-go/kubernetes"
	"log/slog"
)

func Probe(c kubernetes.Interface) { slog.Info("probing") }
func Print()                       { println("x") }
