package pricesource

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
)

// crlfReference is what crReader must produce: a CR not followed by LF becomes LF.
func crlfReference(s string) string {
	b := []byte(s)
	for i := range b {
		if b[i] == '\r' && (i+1 == len(b) || b[i+1] != '\n') {
			b[i] = '\n'
		}
	}
	return string(b)
}

func TestCRReader(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{name: "bare CR", in: "a\rb\r", want: "a\nb\n"},
		{name: "CRLF untouched", in: "a\r\nb\r\n", want: "a\r\nb\r\n"},
		{name: "CR then CRLF", in: "a\r\r\nb", want: "a\n\r\nb"},
		{name: "LF untouched", in: "a\nb", want: "a\nb"},
		{name: "two CRs", in: "\r\r", want: "\n\n"},
	}
	for _, tt := range tests {
		for _, chunked := range []bool{false, true} {
			t.Run(tt.name, func(t *testing.T) {
				var r io.Reader = strings.NewReader(tt.in)
				if chunked { // a CR at the end of one read and its LF at the start of the next
					r = iotest.OneByteReader(r)
				}
				got, err := io.ReadAll(newCRReader(r))
				if err != nil || string(got) != tt.want {
					t.Fatalf("read %q, %v; want %q", got, err, tt.want)
				}
			})
		}
	}
}

func FuzzCRReader(f *testing.F) {
	for _, s := range []string{"a\rb", "a\r\nb", "\r", "\r\r\n\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range []io.Reader{strings.NewReader(s), iotest.OneByteReader(strings.NewReader(s))} {
			got, err := io.ReadAll(newCRReader(r))
			if err != nil || string(got) != crlfReference(s) {
				t.Fatalf("crReader(%q) = %q, %v; want %q", s, got, err, crlfReference(s))
			}
		}
	})
}

// TestOpenPriceFileLimits: a file over the cap is refused before it is read (naming the file,
// its size and the cap); a pipe, which has no size, is cut off at the cap.
func TestOpenPriceFileLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 2000)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := openPriceFile(big, 1000)
	var tl *FileTooLargeError
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), big+" is 2000 bytes, over the limit of 1000 bytes") {
		t.Fatalf("err = %v, want the file, its size and the limit", err)
	}
	f, err := openPriceFile(big, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(f); err != nil || len(b) != 2000 {
		t.Fatalf("a file at the cap: %d bytes, %v", len(b), err)
	}
	f.Close()

	pipe := filepath.Join(dir, "pipe.csv")
	if err := syscall.Mkfifo(pipe, 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	go func() {
		w, err := os.OpenFile(pipe, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		_, _ = w.Write([]byte(strings.Repeat("y", 5000)))
	}()
	_, err = openPriceFile(pipe, 1000)
	if !errors.As(err, &tl) || !strings.Contains(err.Error(), "is more than that, over the limit of 1000 bytes") {
		t.Fatalf("pipe: err = %v, want it cut off at the limit", err)
	}
}

// TestSkyPilotFileTooLarge: the source reports a catalog over its cap as too_large, naming it.
func TestSkyPilotFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "aws_vms.csv")
	body := "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region\n" +
		strings.Repeat("p5.48xlarge,H100,8,98.32,30.1,us-east-1\n", 100)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := (&SkyPilotFiles{Paths: []string{path}, MaxBytes: 1024}).Fetch(t.Context(), at)
	if e := wantKind(t, err, KindTooLarge); !strings.Contains(e.Error(), path) || !strings.Contains(e.Error(), "1024 bytes") {
		t.Fatalf("err = %v, want the file and the limit named", err)
	}
}

// TestMissingPriceFileSaysTheFile: "collector prices --file nope.csv" said "client at nope.csv";
// a file that cannot be read is named as the price file it is.
func TestMissingPriceFileSaysTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.csv")
	_, err := (&SkyPilotFiles{Paths: []string{path}}).Fetch(t.Context(), at)
	if err == nil || !strings.Contains(err.Error(), "reading the price file "+path+": open ") || strings.Contains(err.Error(), "client at") {
		t.Fatalf("err = %v, want it to say the price file %s could not be read", err, path)
	}
}
