package helm_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// shellWords splits a command line as a POSIX shell would for the quoting the docs use: single
// and double quotes, and backslash escapes outside single quotes. A # at a word's start ends the
// line; a trailing & (a job in the background) is dropped.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quote := false, byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				w.WriteByte(c)
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '\\' && i+1 < len(line) {
				i++
				w.WriteByte(line[i])
			} else {
				w.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '$' && strings.HasPrefix(line[i:], "$("): // a command substitution, kept as written
			end := substitutionEnd(line, i)
			w.WriteString(line[i:end])
			i, inWord = end-1, true
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		case c == '#' && !inWord:
			i = len(line)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote in %q", quote, line)
	}
	if inWord {
		words = append(words, w.String())
	}
	if t := strings.TrimSpace(line); (t == "&" || strings.HasSuffix(t, " &") || strings.HasSuffix(t, "\t&")) && len(words) > 0 {
		n := len(words)
		words = words[:n-1]
	}
	return words, nil
}

// substitutionEnd is the index just past the ) that closes the $( at i (the line's end when
// none does).
func substitutionEnd(line string, i int) int {
	depth := 0
	for j := i + 1; j < len(line); j++ {
		switch line[j] {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return j + 1
			}
		}
	}
	return len(line)
}

// FuzzShellWords: words quoted as a shell script would quote them split back into the same words.
func FuzzShellWords(f *testing.F) {
	f.Add("a", "b c", `it's "quoted"`)
	f.Fuzz(func(t *testing.T, a, b, c string) {
		want := []string{a, b, c}
		var line []string
		for _, w := range want {
			line = append(line, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
		}
		got, err := shellWords(strings.Join(line, " "))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("shellWords(%q) = %q, want %q", strings.Join(line, " "), got, want)
		}
	})
}
