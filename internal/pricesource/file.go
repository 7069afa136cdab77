package pricesource

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

// DefaultMaxFileBytes bounds one price file. SkyPilot's whole AWS catalog, CPU rows included,
// is about 20 MB and its GPU rows a fraction of that, so 64 MiB leaves room to grow while a
// runaway or wrong file (a log, a dump) fails at once instead of filling the collector's memory.
const DefaultMaxFileBytes = 64 << 20

// FileTooLargeError is a price file over its cap. Size is 0 when the file is not a regular
// file (a pipe) and was cut off while reading.
type FileTooLargeError struct {
	Path        string
	Size, Limit int64
}

func (e *FileTooLargeError) Error() string {
	size := "more than that"
	if e.Size > 0 {
		size = mib(e.Size)
	}
	return fmt.Sprintf("%s is %s, over the limit of %s for a price file: keep only its GPU rows, or split it "+
		"(by region) and list every part under files:", e.Path, size, mib(e.Limit))
}

func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d bytes", n)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// openPriceFile opens path for streaming within limit. A regular file larger than limit is
// refused before a byte is read, and one that grows past it while read fails there. Anything
// else (a pipe, a device) has no size to check, so it is read into memory first, up to limit:
// what it costs before it is refused is the limit, never what the other end sends.
func openPriceFile(path string, limit int64) (io.ReadCloser, error) {
	if limit <= 0 {
		limit = DefaultMaxFileBytes
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	capped := &cappedReader{r: f, left: limit, path: path, limit: limit}
	if st.Mode().IsRegular() {
		if st.Size() > limit {
			f.Close()
			return nil, &FileTooLargeError{Path: path, Size: st.Size(), Limit: limit}
		}
		return struct {
			io.Reader
			io.Closer
		}{capped, f}, nil
	}
	defer f.Close()
	return readChunks(capped)
}

// readChunks reads r to its end in 1 MiB pieces, so holding it costs what was read and no
// more (io.ReadAll's doubling can hold twice that while it grows).
func readChunks(r io.Reader) (io.ReadCloser, error) {
	var parts []io.Reader
	for {
		buf := make([]byte, 1<<20)
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			parts = append(parts, bytes.NewReader(buf[:n]))
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return io.NopCloser(io.MultiReader(parts...)), nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// readPriceFile reads a whole (small) price file, within limit.
func readPriceFile(path string, limit int64) ([]byte, error) {
	f, err := openPriceFile(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// cappedReader fails once more than limit bytes were read.
type cappedReader struct {
	r     io.Reader
	left  int64
	path  string
	limit int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, &FileTooLargeError{Path: c.path, Limit: c.limit}
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1] // one byte past the cap tells a file at the cap from one over it
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left < 0 {
		return n - 1, &FileTooLargeError{Path: c.path, Limit: c.limit}
	}
	return n, err
}

// crReader turns bare CR line ends (classic Mac files) into LF, leaving CRLF alone, so that a
// CSV written that way reads as rows instead of one endless header line.
type crReader struct{ r *bufio.Reader }

func newCRReader(r io.Reader) crReader { return crReader{r: bufio.NewReader(r)} }

func (c crReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i := 0; i < n; i++ {
		if p[i] != '\r' {
			continue
		}
		if i+1 < n {
			if p[i+1] != '\n' {
				p[i] = '\n'
			}
			continue
		}
		if next, perr := c.r.Peek(1); perr != nil || next[0] != '\n' {
			p[i] = '\n'
		}
	}
	return n, err
}
