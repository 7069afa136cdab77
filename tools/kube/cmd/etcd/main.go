// Command etcd is etcd's own server main (etcdmain), built at the version k8s.io/kubernetes
// v1.37.2 requires, so that the tests' API server talks to the etcd it was released with.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
