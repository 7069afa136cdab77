// Package clitest holds the checks every program's tests run over its command tree: the
// commands the docs name exist, every command has an example, flags' help reads right and every
// command that prints data takes the same -o/--output.
package clitest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// DocCommand is one command line found in a document.
type DocCommand struct {
	At   string   // file:line
	Line string   // as written
	Args []string // the words after the program's name
}

var inlineCode = regexp.MustCompile("`([^`]+)`")

// DocCommands returns the command lines of program in the markdown files matching globs: every
// line of a fenced code block and every inline code span that starts with the program's name
// (or ./bin/<name>) and a sub-command.
func DocCommands(program string, globs ...string) ([]DocCommand, error) {
	var out []DocCommand
	for _, g := range globs {
		files, err := filepath.Glob(g)
		if err != nil {
			return nil, fmt.Errorf("glob %q: %w", g, err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, err
			}
			out = append(out, commandsIn(f, data, program)...)
		}
	}
	return out, nil
}

// commandsIn scans one markdown document.
func commandsIn(name string, data []byte, program string) []DocCommand {
	var out []DocCommand
	sc := bufio.NewScanner(bytes.NewReader(data))
	fenced, pending, start := false, "", 0
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced, pending = !fenced, ""
			continue
		}
		if !fenced {
			for _, m := range inlineCode.FindAllStringSubmatch(line, -1) {
				if c, ok := parseCommand(m[1], program); ok {
					out = append(out, DocCommand{At: fmt.Sprintf("%s:%d", name, n), Line: m[1], Args: c})
				}
			}
			continue
		}
		if pending == "" {
			start = n
		}
		if s, ok := strings.CutSuffix(strings.TrimRight(line, " "), "\\"); ok {
			pending += s + " "
			continue
		}
		full := pending + line
		pending = ""
		if c, ok := parseCommand(full, program); ok {
			out = append(out, DocCommand{At: fmt.Sprintf("%s:%d", name, start), Line: strings.TrimSpace(full), Args: c})
		}
	}
	return out
}

// parseCommand splits a shell line into the program's arguments, up to a comment, a pipe or a
// redirection; optional parts in [brackets] are left out.
func parseCommand(line, program string) ([]string, bool) {
	words := shellWords(line)
	for len(words) > 0 && (words[0] == "$" || strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-")) {
		words = words[1:] // a prompt, or VAR=value before the command
	}
	if len(words) < 2 || strings.TrimPrefix(words[0], "./bin/") != program {
		return nil, false
	}
	var args []string
	depth := 0
	for _, w := range words[1:] {
		switch {
		case w == "#" || w == "|" || w == "&&" || w == ";" || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>"):
			return args, len(args) > 0
		case strings.HasPrefix(w, "["):
			depth++
		}
		if depth == 0 {
			args = append(args, w)
		}
		if strings.HasSuffix(w, "]") && depth > 0 {
			depth--
		}
	}
	if len(args) == 0 || !regexp.MustCompile(`^[a-z-]+$`).MatchString(args[0]) {
		return nil, false
	}
	return args, true
}

// shellWords splits s at spaces outside single and double quotes, dropping the quotes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
