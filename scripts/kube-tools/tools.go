//go:build tools

// Package tools pins the main packages that install-kube-tools builds.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
