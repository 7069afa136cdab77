package anomalywatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/bursar-dev/bursar/internal/anomaly"
)

// Answer is a person's answer to an anomaly: whether its cause was expected, who said so and
// when. It is stored in bus.BucketAnomalyAnswers under Key(Cause).
type Answer struct {
	Cause    string    `json:"cause"`
	Expected bool      `json:"expected"`
	Actor    string    `json:"actor"`             // a Slack user id, or the console's identity
	At       time.Time `json:"at"`                // when the answer was given
	Anomaly  string    `json:"anomaly,omitempty"` // the anomaly it was given on
	Series   string    `json:"series,omitempty"`
}

// Feedback is the answer as the detector's Quieter takes it.
func (a Answer) Feedback() anomaly.Feedback {
	return anomaly.Feedback{Cause: a.Cause, Expected: a.Expected}
}

// Word is how reports show the answer.
func (a Answer) Word() string {
	if a.Expected {
		return "expected"
	}
	return "not expected"
}

// Key is the bucket key of a cause. A cause holds '=', ',' and '|', which KV keys may not, and
// can be long, so the key is a digest of it; the cause itself is in the value.
func Key(cause string) string {
	sum := sha256.Sum256([]byte(cause))
	return "cause." + hex.EncodeToString(sum[:16])
}

// ErrCorrupt says a value in the answers bucket is not an answer for its key.
var ErrCorrupt = errors.New("not an anomaly answer")

// Decode reads one value of the bucket, checking that it belongs under key.
func Decode(key string, data []byte) (Answer, error) {
	var a Answer
	if err := json.Unmarshal(data, &a); err != nil {
		return a, fmt.Errorf("answer %s: %w: %w", key, ErrCorrupt, err)
	}
	if strings.TrimSpace(a.Cause) == "" || Key(a.Cause) != key {
		return a, fmt.Errorf("answer %s: cause %q is not the key's: %w", key, a.Cause, ErrCorrupt)
	}
	return a, nil
}

// Answers is the answers bucket. Only the arbiter writes it (Put); reports read it (ReadAll).
type Answers struct{ KV jetstream.KeyValue }

// casTries bounds Put's compare-and-set rounds: two writers of one cause at once are rare.
const casTries = 5

// Put stores a by compare-and-set: a newer answer already stored for the cause is kept (two
// clicks racing: the later one wins, whichever arbiter writes first). It reports whether a is
// now the cause's answer.
func (s Answers) Put(ctx context.Context, a Answer) (bool, error) {
	key := Key(a.Cause)
	a.At = a.At.UTC()
	data, err := json.Marshal(a)
	if err != nil {
		return false, fmt.Errorf("encoding the answer to %s: %w", a.Anomaly, err)
	}
	for range casTries {
		e, err := s.KV.Get(ctx, key)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			_, err = s.KV.Create(ctx, key, data)
		case err != nil:
			return false, fmt.Errorf("reading the answer for %s: %w", key, err)
		default:
			if old, derr := Decode(key, e.Value()); derr == nil && old.At.After(a.At) {
				return false, nil
			}
			_, err = s.KV.Update(ctx, key, data, e.Revision())
		}
		if err == nil {
			return true, nil
		}
		if !conflict(err) {
			return false, fmt.Errorf("storing the answer for %s: %w", key, err)
		}
	}
	return false, fmt.Errorf("storing the answer for %s: still changing after %d tries", key, casTries)
}

// conflict says a write lost a compare-and-set race.
func conflict(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyExists) ||
		(errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant))
}

// ReadAll returns every answer by cause. Values that are not answers are returned as errors
// beside the answers that are.
func (s Answers) ReadAll(ctx context.Context) (map[string]Answer, error) {
	keys, err := s.KV.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing anomaly answers: %w", err)
	}
	out := map[string]Answer{}
	var bad []error
	for k := range keys.Keys() {
		e, err := s.KV.Get(ctx, k)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("reading anomaly answer %s: %w", k, err)
		}
		a, err := Decode(k, e.Value())
		if err != nil {
			bad = append(bad, err)
			continue
		}
		out[a.Cause] = a
	}
	return out, errors.Join(bad...)
}

// Words reads the bucket as reports show it: by cause, the answer, who gave it and when. What
// does not read is left out, with ErrCorrupt.
func Words(ctx context.Context, kv jetstream.KeyValue) (map[string]string, error) {
	all, err := Answers{KV: kv}.ReadAll(ctx)
	out := make(map[string]string, len(all))
	for cause, a := range all {
		out[cause] = a.Word() + " (" + a.Actor + ", " + a.At.UTC().Format(time.RFC3339) + ")"
	}
	return out, err
}
