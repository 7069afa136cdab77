package anomalywatch

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestAnswersLaterClickWins(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	s := Answers{KV: answersKV(t, env.JS)}
	cause := "workload=llm|workload=llm,location=aws-use1,gpu_model=H100-80GB,market=on_demand"
	later := Answer{Cause: cause, Expected: true, Actor: "U0DANA", At: t0.Add(time.Minute)}
	earlier := Answer{Cause: cause, Expected: false, Actor: "U0SAM", At: t0}
	tests := []struct {
		name     string
		put      Answer
		wantKept bool
		want     Answer
	}{
		{"first answer stored", later, true, later},
		{"an older click does not overwrite", earlier, false, later},
		{"a newer one does", Answer{Cause: cause, Actor: "U0SAM", At: t0.Add(time.Hour)}, true,
			Answer{Cause: cause, Actor: "U0SAM", At: t0.Add(time.Hour)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kept, err := s.Put(ctx, tc.put)
			if err != nil || kept != tc.wantKept {
				t.Fatalf("Put: kept %v, %v; want %v", kept, err, tc.wantKept)
			}
			all, err := s.ReadAll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := all[cause]; got.Actor != tc.want.Actor || got.Expected != tc.want.Expected || !got.At.Equal(tc.want.At) {
				t.Fatalf("stored %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestAnswersCorruptValueReported(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	kv := answersKV(t, env.JS)
	good := Answer{Cause: "workload=llm|x", Expected: true, Actor: "U1", At: t0}
	if _, err := (Answers{KV: kv}).Put(ctx, good); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, Key("workload=other|y"), []byte(`{"cause":"workload=llm|x","expected":true}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "cause.junk", []byte("not json")); err != nil {
		t.Fatal(err)
	}
	all, err := Answers{KV: kv}.ReadAll(ctx)
	if !errors.Is(err, ErrCorrupt) || len(all) != 1 || !all[good.Cause].Expected {
		t.Fatalf("ReadAll = %+v, %v; want the good answer and ErrCorrupt", all, err)
	}
}

func TestDecode(t *testing.T) {
	cause := "team=search|a,b"
	tests := []struct {
		name, key, value string
		wantErr          bool
	}{
		{"an answer", Key(cause), `{"cause":"team=search|a,b","expected":true,"actor":"U1","at":"2026-12-01T00:00:00Z"}`, false},
		{"not JSON", Key(cause), `{"cause":`, true},
		{"no cause", Key(""), `{"expected":true}`, true},
		{"another key's cause", Key("team=other"), `{"cause":"team=search|a,b"}`, true},
		{"a bad time", Key(cause), `{"cause":"team=search|a,b","at":"yesterday"}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.key, []byte(tc.value))
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrCorrupt)) {
				t.Fatalf("Decode: %v, want error %v (ErrCorrupt)", err, tc.wantErr)
			}
		})
	}
}

// FuzzDecode feeds the bucket's decoder arbitrary values: it never panics, and what it accepts
// belongs under its key.
func FuzzDecode(f *testing.F) {
	f.Add("workload=llm|x", []byte(`{"cause":"workload=llm|x","expected":true}`))
	f.Add("a", []byte(`{"cause":"b"}`))
	f.Add("", []byte(`null`))
	f.Fuzz(func(t *testing.T, cause string, value []byte) {
		a, err := Decode(Key(cause), value)
		if err == nil && Key(a.Cause) != Key(cause) {
			t.Fatalf("accepted cause %q under the key of %q", a.Cause, cause)
		}
	})
}
