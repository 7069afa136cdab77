package arbiter

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/bursar-dev/bursar/internal/fleet"
)

// A book is stored as its JSON, gzipped once the JSON passes compressAbove: a replica takes about
// 230 bytes of JSON and under 20 gzipped, so the largest workload the fleet file accepts (10,000
// replicas, and as many again launching) fits NATS's default 1 MiB max_payload, while small books
// stay readable with `nats kv get`. A gzipped value begins with gzip's magic bytes, never with
// JSON's '{', so a value written before compression existed still loads.
const compressAbove = 64 << 10

// maxBookJSON bounds what a gzipped value may expand to (a value that expands further is not a
// book Bursar wrote).
const maxBookJSON = 256 << 20

var gzipMagic = []byte{0x1f, 0x8b}

// errNotABook says a placement value is not a book of the workload its key names.
var errNotABook = errors.New("not a book")

func encodeBook(b *Book) ([]byte, error) {
	data, err := json.Marshal(b)
	if err != nil || len(data) <= compressAbove {
		return data, err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeBook reads the value stored under key. A value that is not JSON (or gzipped JSON) of a
// book, or the book of a workload other than the one the key names, is errNotABook.
func decodeBook(key string, data []byte) (*Book, error) {
	if bytes.HasPrefix(data, gzipMagic) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %w", errNotABook, err)
		}
		data, err = io.ReadAll(io.LimitReader(zr, maxBookJSON+1))
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %w", errNotABook, err)
		}
		if len(data) > maxBookJSON {
			return nil, fmt.Errorf("%w: expands beyond %d bytes", errNotABook, maxBookJSON)
		}
	}
	var b Book
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("%w: %w", errNotABook, err)
	}
	if b.Workload == "" {
		return nil, fmt.Errorf("%w: no workload", errNotABook)
	}
	if want := (KVBooks{}).key(b.Workload); key != want {
		return nil, fmt.Errorf("%w: the book of workload %q belongs under %s", errNotABook, b.Workload, want)
	}
	return &b, nil
}

// checkBook is decodeBook's verdict alone.
func checkBook(key string, data []byte) error {
	_, err := decodeBook(key, data)
	return err
}

// storedPerReplica bounds the bytes one replica listed in a book takes stored, gzipped: 16.9 on
// the largest book of TestLargestBookIsStored, whose replicas share as little as they can. A
// book lists a replica up to three times (held, launched by a move, in the move's action).
const storedPerReplica = 24

// storedOverhead bounds the rest of a book: holds, declined actions, the ids of actions done.
const storedOverhead = 64 << 10

// bookBound is the most a book of a workload of n replicas takes stored.
func bookBound(n int) int64 { return int64(3*n*storedPerReplica + storedOverhead) }

// checkPayload refuses a fleet whose largest book might not fit in one message of the NATS
// servers (max_payload): its saves would fail and the workload be frozen. A workload without a
// max counts at the planner's limit.
func checkPayload(cfg *fleet.Config, maxPayload int64) error {
	for _, w := range cfg.Workloads {
		n := w.Replicas.Max
		switch {
		case w.IsJob():
			n = 1
		case n == 0:
			n = max(w.Replicas.Min, fleet.MaxReplicas)
		}
		if need := bookBound(n); need > maxPayload {
			return fmt.Errorf("workload %s may hold up to %d replicas: its book may take %d bytes, over the NATS servers' "+
				"max_payload of %d: raise max_payload on every server to at least %d (nats-server.conf: max_payload: %d), "+
				"or give the workload a lower replicas.max", w.Name, n, need, maxPayload, need, need)
		}
	}
	return nil
}
