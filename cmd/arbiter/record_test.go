package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseSubjects(t *testing.T) {
	tests := []struct {
		name    string
		flags   []string
		want    string
		wantErr string
	}{
		{name: "none", want: "map[]"},
		{name: "two streams", flags: []string{"fleet=bursar.fleet.llm.>", "TELEMETRY=bursar.gpu.aws.>", "TELEMETRY=bursar.tokens.aws.>"},
			want: "map[FLEET:[bursar.fleet.llm.>] TELEMETRY:[bursar.gpu.aws.> bursar.tokens.aws.>]]"},
		{name: "no subject", flags: []string{"FLEET="}, wantErr: "want STREAM=SUBJECT"},
		{name: "unknown stream", flags: []string{"DLQ=bursar.dlq.>"}, wantErr: "stream must be"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSubjects(tc.flags)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseSubjects(%q) = %v, want error with %q", tc.flags, err, tc.wantErr)
				}
				return
			}
			if err != nil || fmt.Sprint(got) != tc.want {
				t.Fatalf("parseSubjects(%q) = %v, %v; want %s", tc.flags, got, err, tc.want)
			}
		})
	}
}
