package demo

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseEventTrace(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Step
		wantErr bool
	}{
		{name: "adds and removes", in: "0,add,node1\n0,add,node2\n60000,remove,node1\n120000,add,node3\n",
			want: []Step{{0, 2}, {time.Minute, 1}, {2 * time.Minute, 2}}},
		{name: "late start counts zero before", in: "480000,add,node1\n",
			want: []Step{{0, 0}, {8 * time.Minute, 1}}},
		{name: "out of order lines are sorted", in: "60000,remove,node1\n0,add,node1\n0,add,node2\n",
			want: []Step{{0, 2}, {time.Minute, 1}}},
		{name: "blank lines skipped", in: "\n0,add,node1\n\n", want: []Step{{0, 1}}},
		{name: "unknown event", in: "0,start,node1\n", wantErr: true},
		{name: "negative time", in: "-5,add,node1\n", wantErr: true},
		{name: "too few fields", in: "0,add\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseEventTrace(strings.NewReader(tt.in), "t.csv")
			if tt.wantErr {
				if !errors.Is(err, ErrBadTrace) {
					t.Fatalf("err = %v, want ErrBadTrace", err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestParseCountTrace(t *testing.T) {
	// The published files repeat each count at +1 and +2 minutes, and the next count starts
	// before those repeats end.
	in := `2021-12-10, 13:07:45, 80
2021-12-10, 13:08:45, 80
2021-12-10, 13:09:45, 80
2021-12-10, 13:08:45, 70
2021-12-10, 13:09:45, 70
2021-12-10, 13:10:45, 70
2021-12-10, 13:10:45, 80
`
	got, err := ParseCountTrace(strings.NewReader(in), "g.txt")
	want := []Step{{0, 80}, {time.Minute, 70}, {3 * time.Minute, 80}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"", "2021-12-10, 13:07:45\n", "2021-12-10, 25:07:45, 3\n", "2021-12-10, 13:07:45, -1\n"} {
		if _, err := ParseCountTrace(strings.NewReader(bad), "g.txt"); !errors.Is(err, ErrBadTrace) {
			t.Errorf("ParseCountTrace(%q) err = %v, want ErrBadTrace", bad, err)
		}
	}
}

func TestSampleAndScale(t *testing.T) {
	steps := []Step{{0, 8}, {90 * time.Second, 2}, {3 * time.Minute, 6}}
	if got, want := Sample(steps, time.Minute), []int{8, 8, 2, 6}; !slices.Equal(got, want) {
		t.Errorf("Sample = %v, want %v", got, want)
	}
	if got, want := Scale([]int{8, 8, 2, 6}, 4), []int{4, 4, 1, 3}; !slices.Equal(got, want) {
		t.Errorf("Scale = %v, want %v", got, want)
	}
	if got := Scale([]int{0, 0}, 4); !slices.Equal(got, []int{0, 0}) {
		t.Errorf("Scale of an empty zone = %v, want zeros", got)
	}
}

func TestZoneJSON(t *testing.T) {
	got, err := ZoneJSON([]int{1, 0, 3}, time.Minute)
	if want := `{"metadata":{"gap_seconds":60},"data":[1,0,3]}` + "\n"; err != nil || string(got) != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
	if _, err := ZoneJSON([]int{1}, 1500*time.Millisecond); err == nil {
		t.Error("a gap of 1.5 s was accepted")
	}
}

func FuzzParseEventTrace(f *testing.F) {
	f.Add("0,add,node1\n60000,remove,node1\n")
	f.Add("480000,add,node1\n")
	f.Fuzz(func(t *testing.T, in string) {
		steps, err := ParseEventTrace(strings.NewReader(in), "f.csv")
		if err != nil {
			return
		}
		for i, s := range steps {
			if s.Count < 0 || (i > 0 && s.At <= steps[i-1].At) {
				t.Fatalf("bad steps %v", steps)
			}
		}
	})
}

func FuzzParseCountTrace(f *testing.F) {
	f.Add("2021-12-10, 13:07:45, 80\n2021-12-10, 13:08:45, 70\n")
	f.Fuzz(func(t *testing.T, in string) {
		steps, err := ParseCountTrace(strings.NewReader(in), "f.txt")
		if err != nil {
			return
		}
		if len(steps) == 0 || steps[0].At != 0 {
			t.Fatalf("steps %v do not start at 0", steps)
		}
		for i, s := range steps {
			if s.Count < 0 || s.At < 0 || (i > 0 && s.At < steps[i-1].At) {
				t.Fatalf("bad steps %v", steps)
			}
		}
	})
}
