package tokens

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "data", "provider-formats", "fixtures", name)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("fixture %s is absent (the shared data folder sits beside the repository)", p)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		page    []byte
		server  Server
		want    Counters
		wantErr string
	}{
		{name: "vllm v1", page: fixture(t, "vllm-metrics.txt"), server: VLLM,
			want: Counters{PromptTokens: 2987112, GenerationTokens: 845233, Requests: 4012 + 311 + 7}},
		{name: "vllm v0 legacy", page: fixture(t, "vllm-metrics-v0-legacy.txt"), server: VLLM,
			want: Counters{PromptTokens: 120443, GenerationTokens: 40117, Requests: 311 + 12}},
		{name: "tgi histogram sums", page: fixture(t, "tgi-metrics.txt"), server: TGI,
			want: Counters{PromptTokens: 611934, GenerationTokens: 281007, Requests: 1520}},
		{name: "vllm counters without _total, two engines", server: VLLM, page: []byte(`# TYPE vllm:prompt_tokens counter
vllm:prompt_tokens{engine="0",model_name="m"} 100
vllm:prompt_tokens{engine="1",model_name="m"} 50
# TYPE vllm:generation_tokens counter
vllm:generation_tokens{engine="0",model_name="m"} 30
vllm:generation_tokens{engine="1",model_name="m"} 12
`), want: Counters{PromptTokens: 150, GenerationTokens: 42}},
		{name: "vllm with only request histograms", server: VLLM, page: []byte(`# TYPE vllm:request_prompt_tokens histogram
vllm:request_prompt_tokens_bucket{le="+Inf",model_name="m"} 4
vllm:request_prompt_tokens_sum{model_name="m"} 400
vllm:request_prompt_tokens_count{model_name="m"} 4
# TYPE vllm:request_generation_tokens histogram
vllm:request_generation_tokens_bucket{le="+Inf",model_name="m"} 4
vllm:request_generation_tokens_sum{model_name="m"} 90
vllm:request_generation_tokens_count{model_name="m"} 4
`), want: Counters{PromptTokens: 400, GenerationTokens: 90, Requests: 4}},
		{name: "tgi without TYPE lines", server: TGI, page: []byte(`tgi_request_input_length_sum 10
tgi_request_input_length_count 2
tgi_request_generated_tokens_sum 7
tgi_request_generated_tokens_count 2
`), want: Counters{PromptTokens: 10, GenerationTokens: 7, Requests: 2}},
		{name: "tgi summaries", server: TGI, page: []byte(`# TYPE tgi_request_input_length summary
tgi_request_input_length{quantile="0.5"} 3
tgi_request_input_length_sum 33
tgi_request_input_length_count 3
# TYPE tgi_request_generated_tokens summary
tgi_request_generated_tokens_sum 21
tgi_request_generated_tokens_count 3
`), want: Counters{PromptTokens: 33, GenerationTokens: 21, Requests: 3}},
		{name: "a tgi page read as vllm", page: fixture(t, "tgi-metrics.txt"), server: VLLM, wantErr: "no vllm token metrics"},
		{name: "a vllm page read as tgi", page: fixture(t, "vllm-metrics.txt"), server: TGI, wantErr: "no tgi token metrics"},
		{name: "html login page", page: []byte("<html><body>sign in</body></html>"), server: VLLM, wantErr: "parsing vllm metrics"},
		{name: "negative counter", server: VLLM, page: []byte("vllm:prompt_tokens_total -5\n"), wantErr: "out of range"},
		{name: "unknown server", page: []byte(""), server: "triton", wantErr: "unknown inference server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(bytes.NewReader(tt.page), tt.server)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse() error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Parse() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"vllm-metrics.txt", "vllm-metrics-v0-legacy.txt", "tgi-metrics.txt"} {
		f.Add(fixture(f, name), false)
		f.Add(fixture(f, name), true)
	}
	f.Add([]byte("tgi_request_input_length_sum NaN\n"), true)
	f.Fuzz(func(t *testing.T, page []byte, tgi bool) {
		server := VLLM
		if tgi {
			server = TGI
		}
		c, err := Parse(bytes.NewReader(page), server)
		if err == nil && (c.PromptTokens < 0 || c.GenerationTokens < 0 || c.Requests < 0) {
			t.Fatalf("Parse() accepted negative counters %+v", c)
		}
	})
}
