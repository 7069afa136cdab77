package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bursar-dev/bursar/internal/cli"
)

// TestPricesOnMalformedCatalog is `collector prices --file` on the catalogs the issue found: a
// quote out of place used to panic, bare CR line ends and an empty file printed 0 offers with
// exit 0, and a hexadecimal or absurd price was an offer. Each now exits 1 with an error that
// names the file and line (or what to change), and the command never panics.
func TestPricesOnMalformedCatalog(t *testing.T) {
	const header = "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region,AvailabilityZone\n"
	const row = "p5.48xlarge,H100,8,98.32,30.1,us-east-1,use1-az1\n"
	tests := []struct {
		name     string
		body     string
		wantCode int
		want     []string // on stderr
	}{
		{name: "quote inside a field", body: header + row + `"a"b`, wantCode: 1, want: []string{"aws_vms.csv:3: column"}},
		{name: "lone quote", body: header + `"`, wantCode: 1, want: []string{"aws_vms.csv:2: column"}},
		{name: "hexadecimal price", body: header + "p5.48xlarge,H100,8,0x1p-2,,us-east-1,use1-az1\n", wantCode: 1,
			want: []string{"aws_vms.csv:2: on_demand price is not a decimal number"}},
		{name: "implausible price", body: header + "p5.48xlarge,H100,8,1e+300,,us-east-1,use1-az1\n", wantCode: 1,
			want: []string{"aws_vms.csv:2:", "above the maximum", "price_bounds.max_per_gpu_hour"}},
		{name: "header only", body: header, wantCode: 1, want: []string{"aws_vms.csv", "no rows after the header"}},
		{name: "empty file", body: "", wantCode: 1, want: []string{"aws_vms.csv"}},
		{name: "cpu rows only", body: header + "m5.large,,,0.096,,us-east-1,use1-az1\n", wantCode: 1, want: []string{"no GPU offers"}},
		{name: "bare CR line ends are read", body: strings.ReplaceAll(header+row, "\n", "\r"), want: []string{"2 offers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "aws_vms.csv")
			writeFile(t, path, tt.body)
			code, stdout, stderr := runMain(t, "prices", "--file", path, "-o", "csv")
			if code != tt.wantCode || strings.Contains(stderr, "panic") {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.wantCode, stdout, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
		})
	}
}

// runMain runs the collector's command tree as main does, with args, and returns its exit
// status and what it wrote. cli.Main prints a failing command's error on os.Stderr, so that is
// captured for the call; the test must not run in parallel.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	errFile, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	var out strings.Builder
	root := newRoot(&cli.Globals{})
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(errFile)
	saved := os.Stderr
	os.Stderr = errFile
	code = cli.Main(root)
	os.Stderr = saved
	b, err := os.ReadFile(errFile.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), string(b)
}
