package console

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIssueTokenKeepsOnlyItsHash(t *testing.T) {
	dir := t.TempDir()
	tok, err := IssueToken(dir, "U0APPROVER")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, TokensFile)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("tokens file mode %v, want 0600", st.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), tok) {
		t.Errorf("the tokens file holds the token itself:\n%s", data)
	}
	tokens, err := readTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if who, ok := lookupToken(tokens, tok); !ok || who != "U0APPROVER" {
		t.Errorf("lookup of the issued token = %q, %v; want U0APPROVER", who, ok)
	}
	// A second token for the same identity replaces the first; another identity's is kept.
	other, err := IssueToken(dir, "ops@example.com")
	if err != nil {
		t.Fatal(err)
	}
	again, err := IssueToken(dir, "U0APPROVER")
	if err != nil {
		t.Fatal(err)
	}
	tokens, _ = readTokens(path)
	for token, want := range map[string]string{tok: "", again: "U0APPROVER", other: "ops@example.com", "bct_guess": ""} {
		if who, _ := lookupToken(tokens, token); who != want {
			t.Errorf("lookup = %q, want %q", who, want)
		}
	}
}

func TestIssueTokenRefusesBadIdentities(t *testing.T) {
	for _, id := range []string{"", "two words", "tab\there", "hash#tag", strings.Repeat("x", 300), "nl\n"} {
		if _, err := IssueToken(t.TempDir(), id); err == nil {
			t.Errorf("IssueToken(%q) = nil error", id)
		}
	}
}

func TestParseTokensRefusesMalformedLines(t *testing.T) {
	hash := strings.Repeat("ab", 32)
	tests := []struct {
		name, data, wantErr string
	}{
		{"one field", "U1\n", "tokens:1: want"},
		{"three fields", "U1 " + hash + " extra\n", "tokens:1: want"},
		{"short hash", "U1 abcd\n", "tokens:1: the hash of U1"},
		{"not hex", "U1 " + strings.Repeat("zz", 32) + "\n", "tokens:1: the hash"},
		{"twice", "U1 " + hash + "\n# c\n\nU1 " + hash + "\n", "tokens:4: U1 is listed again (first on line 1)"},
		{"control", "U\x01 " + hash + "\n", "tokens:1: identity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseTokens("tokens", []byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	got, err := parseTokens("tokens", []byte("# who may approve\n\n U1 "+strings.ToUpper(hash)+" \n"))
	if err != nil || len(got) != 1 || got[0].identity != "U1" || got[0].hash != hash {
		t.Errorf("parseTokens with a comment, a blank line and an upper-case hash = %v, %v", got, err)
	}
}

func FuzzParseTokens(f *testing.F) {
	f.Add([]byte("U1 " + strings.Repeat("ab", 32) + "\n"))
	f.Add([]byte("# c\n\nops@example.com " + strings.Repeat("0", 64)))
	f.Add([]byte("U1\x00 x y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tokens, err := parseTokens("tokens", data)
		if err != nil {
			return
		}
		for _, e := range tokens {
			if checkIdentity(e.identity) != nil || len(e.hash) != 64 {
				t.Fatalf("parseTokens kept a bad entry %q", e)
			}
		}
	})
}
