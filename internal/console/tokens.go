package console

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// TokensFile is where, under the data dir, the console keeps the identities that may log in: one
// line per identity, "identity sha256-hex-of-token". Only the hashes are kept, so reading the file
// does not give a token away.
const TokensFile = "console/tokens"

// maxIdentity bounds an identity's length: a Slack id or an e-mail address is far shorter.
const maxIdentity = 254

// tokenPrefix marks a console token, so one pasted in the wrong place is recognisable.
const tokenPrefix = "bct_"

// IssueToken makes a new token for identity, records its hash in dataDir's tokens file (0600),
// replacing any earlier token of that identity, and returns the token. The caller shows it once;
// it is not kept anywhere else.
func IssueToken(dataDir, identity string) (string, error) {
	if err := checkIdentity(identity); err != nil {
		return "", err
	}
	path := filepath.Join(dataDir, TokensFile)
	tokens, err := readTokens(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("making a token: %w", err)
	}
	token := tokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	var b bytes.Buffer
	for _, t := range tokens {
		if t.identity != identity {
			fmt.Fprintf(&b, "%s %s\n", t.identity, t.hash)
		}
	}
	fmt.Fprintf(&b, "%s %s\n", identity, hashToken(token))
	if err := writePrivate(path, b.Bytes()); err != nil {
		return "", err
	}
	return token, nil
}

// tokenEntry is one line of the tokens file.
type tokenEntry struct{ identity, hash string }

// hashToken is the hex SHA-256 of a token, as the tokens file keeps it.
func hashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// readTokens reads the tokens file at path.
func readTokens(path string) ([]tokenEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the console's tokens: %w", err)
	}
	return parseTokens(path, data)
}

// parseTokens reads a tokens file's lines: blank lines and lines starting with # are skipped;
// every other line is an identity and the hex SHA-256 of its token. Errors name file:line.
func parseTokens(name string, data []byte) ([]tokenEntry, error) {
	var out []tokenEntry
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"identity sha256-hex\", got %d fields; "+
				"make tokens with `arbiter console token --as ID`", name, n, len(f))
		}
		if err := checkIdentity(f[0]); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if h, err := hex.DecodeString(f[1]); err != nil || len(h) != sha256.Size {
			return nil, fmt.Errorf("%s:%d: the hash of %s is not 64 hex digits (a SHA-256)", name, n, f[0])
		}
		if first, dup := seen[f[0]]; dup {
			return nil, fmt.Errorf("%s:%d: %s is listed again (first on line %d): keep one line per identity", name, n, f[0], first)
		}
		seen[f[0]] = n
		out = append(out, tokenEntry{identity: f[0], hash: strings.ToLower(f[1])})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// checkIdentity refuses an identity that cannot be a Slack id or an e-mail: empty, too long, or
// holding spaces or control characters (which would break the file's lines).
func checkIdentity(id string) error {
	if id == "" {
		return errors.New("identity: empty; give a Slack user id (U0123ABC) or an e-mail")
	}
	if len(id) > maxIdentity {
		return fmt.Errorf("identity: %d characters, at most %d", len(id), maxIdentity)
	}
	for _, r := range id {
		if r <= ' ' || r == 0x7f || r == '#' {
			return fmt.Errorf("identity %q: spaces, control characters and # are not allowed", id)
		}
	}
	return nil
}

// lookupToken returns the identity whose token is token, comparing every hash in constant time.
func lookupToken(tokens []tokenEntry, token string) (string, bool) {
	if token == "" {
		return "", false
	}
	h := []byte(hashToken(token))
	who := ""
	for _, t := range tokens {
		if subtle.ConstantTimeCompare(h, []byte(t.hash)) == 1 {
			who = t.identity
		}
	}
	return who, who != ""
}

// writePrivate writes data to path readable by its owner only, through a temporary file so a
// reader never sees half of it.
func writePrivate(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("making %s: %w", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
