// Command image assembles Bursar's container image without a daemon or a base image: an OCI
// image layout (and a tarball "podman load" and "docker load" read) whose root holds the three
// programs, the shared libraries they link against (read from their ELF headers), CA
// certificates, a non-root user 65532 and an empty /tmp. No registry is needed to build it.
//
//	go run ./scripts/image -tag ghcr.io/bursar-dev/bursar:v1.2.3 -out dist/image -tar dist/bursar-image.tar bin-image/arbiter bin-image/collector bin-image/report
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"
)

func main() {
	var o Options
	flag.StringVar(&o.Tag, "tag", "ghcr.io/bursar-dev/bursar:dev", "the image's name and tag")
	flag.StringVar(&o.Layout, "out", "dist/image", "directory of the OCI image layout to write (replaced)")
	flag.StringVar(&o.Tarball, "tar", "", "also write a tarball for podman load / docker load here")
	flag.StringVar(&o.CACerts, "ca", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to carry as /etc/ssl/certs/ca-certificates.crt")
	flag.StringVar(&o.Chdb, "chdb", "", "libchdb.so to carry (the embedded engine); empty: none, as a cluster with a ClickHouse server needs")
	flag.StringVar(&o.Version, "version", "dev", "the version label")
	dpkg := flag.Bool("dpkg", true, "record the Debian packages the carried libraries come from in /var/lib/dpkg/status.d, "+
		"as distroless images do, so scanners see and version them (needs dpkg-query)")
	flag.StringVar(&o.OSRelease, "os-release", "/etc/os-release", "the build machine's os-release, whose ID and VERSION_ID the image's says (with -dpkg)")
	flag.Parse()
	if *dpkg {
		if _, err := exec.LookPath("dpkg-query"); err != nil {
			fmt.Fprintln(os.Stderr, "image:", ErrNoDpkg)
			os.Exit(2)
		}
		o.Dpkg = DpkgQuery{}
	}
	o.Binaries = flag.Args()
	o.Created = time.Unix(0, 0).UTC()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "image: SOURCE_DATE_EPOCH %q: want seconds since 1970\n", s)
			os.Exit(2)
		}
		o.Created = time.Unix(sec, 0).UTC()
	}
	if err := Build(o); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}
