package helm_test

// The e2e tests (e2e_*_test.go, `make e2e`) follow docs/deploy.md as a new user would: this
// file reads the page's steps. It carries no build tag, so that the page's form is checked and
// its parser fuzzed in `make test`.

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docsFile is the page a new user follows to install Bursar.
const docsFile = "../../docs/deploy.md"

// docsInstall is what docs/deploy.md's "From zero" steps tell a user to run, read from the page
// itself so that the tests follow the page as it is: the namespaces, the Secrets with their keys,
// and the chart's install with its --set and -f values.
type docsInstall struct {
	namespace string
	secrets   []docsSecret
	sets      []string // helm install --set, in order
	files     []string // helm install -f, in order; testdata/NAME holds what a user would put there
	natsSets  []string // the NATS chart's install (step 1): --set
	natsFiles []string // and -f
	// bodies are the -f files whose contents the page gives (a YAML block just before the
	// install); the others come from testdata.
	bodies map[string]string
	yamls  []string // every YAML block of the steps, in order (the choices' values)
	// alternatives are Secrets the page offers instead of one of the same name (Slack's HTTP
	// mode instead of Socket Mode); secrets holds the first, the default.
	alternatives []docsSecret
	drop         []string // top-level values a step left out removes from the -f files (slack)
}

// docsSecret is one `kubectl create secret generic`: its keys, each with the literal the page
// gives (--from-literal) or "" (--from-file: the page leaves the contents to the user).
type docsSecret struct {
	name string
	keys map[string]string
}

// readDocs parses the shell blocks of the "From zero" section of docs/deploy.md.
func readDocs(t testing.TB) docsInstall {
	t.Helper()
	b, err := os.ReadFile(docsFile)
	if err != nil {
		t.Fatal(err)
	}
	in, err := parseDocs(string(b))
	if err != nil {
		t.Fatalf("%s: %v", docsFile, err)
	}
	return in
}

func parseDocs(page string) (docsInstall, error) {
	in := docsInstall{bodies: map[string]string{}}
	page = "\n" + page
	start := strings.Index(page, "\n## From zero")
	if start < 0 {
		return in, fmt.Errorf(`no "## From zero" section`)
	}
	section := page[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	found, lastYAML := false, ""
	for it := range docsItems(section) {
		if it.yaml != "" {
			in.yamls, lastYAML = append(in.yamls, it.yaml), it.yaml
			continue
		}
		words, err := shellWords(it.cmd)
		if err != nil {
			return in, fmt.Errorf("line %d: %w", it.line, err)
		}
		switch {
		case len(words) > 1 && words[0] == "kubectl":
			if err := in.kubectl(words[1:]); err != nil {
				return in, fmt.Errorf("line %d: %w", it.line, err)
			}
		case len(words) > 3 && words[0] == "helm" && words[1] == "install":
			if in.helmInstall(words[2:]) {
				found = true
				in.bind(lastYAML)
			}
		}
		lastYAML = ""
	}
	if !found {
		return in, fmt.Errorf("no `helm install ... deploy/helm/bursar` in the From zero steps")
	}
	return in, nil
}

// bind takes a YAML block given just before the chart's install as the contents of its one
// -f file ("Write the release's values, say my-values.yaml:").
func (in *docsInstall) bind(yaml string) {
	if yaml != "" && len(in.files) == 1 {
		in.bodies[in.files[0]] = yaml
	}
}

// inlineCommand is a command given in the text, in backquotes (step 1's NATS install).
var inlineCommand = regexp.MustCompile("`((?:helm|kubectl) [^`]+)`")

// docsItem is one command of the section (continuation lines joined), or one YAML block.
type docsItem struct {
	line      int // where it starts, within the section
	cmd, yaml string
}

// docsItems yields the section's commands, from its fenced blocks and inline, and its YAML blocks.
func docsItems(section string) func(yield func(docsItem) bool) {
	return func(yield func(docsItem) bool) {
		sc := bufio.NewScanner(strings.NewReader(section))
		inBlock, isYAML, cur := false, false, docsItem{}
		for n := 1; sc.Scan(); n++ {
			raw := sc.Text()
			line := strings.TrimSpace(raw)
			if info, ok := strings.CutPrefix(line, "```"); ok {
				if inBlock && isYAML && cur.yaml != "" {
					cur.yaml = dedent(cur.yaml)
					if !yield(cur) {
						return
					}
				}
				inBlock, isYAML, cur = !inBlock, info == "yaml", docsItem{line: n + 1}
				continue
			}
			switch {
			case !inBlock:
				for _, m := range inlineCommand.FindAllStringSubmatch(line, -1) {
					if !yield(docsItem{line: n, cmd: m[1]}) {
						return
					}
				}
			case isYAML:
				cur.yaml += raw + "\n"
			case line == "":
			default:
				if cur.cmd == "" {
					cur.line = n
				}
				if body, ok := strings.CutSuffix(line, `\`); ok {
					cur.cmd += body + " "
					continue
				}
				cur.cmd += line
				if !yield(cur) {
					return
				}
				cur = docsItem{}
			}
		}
	}
}

// dedent removes the indentation every line of a block shares (a block inside a list docsItem).
func dedent(block string) string {
	lines := strings.Split(block, "\n")
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := len(l) - len(strings.TrimLeft(l, " ")); indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			lines[i] = l[indent:]
		}
	}
	return strings.Join(lines, "\n")
}

func (in *docsInstall) kubectl(args []string) error {
	var ns, name string
	var rest []string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-n" || a == "--namespace":
			if i+1 < len(args) {
				ns, i = args[i+1], i+1
			}
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) == 3 && rest[0] == "create" && rest[1] == "namespace" {
		in.namespace = rest[2]
		return nil
	}
	if len(rest) < 4 || rest[0] != "create" || rest[1] != "secret" || rest[2] != "generic" {
		return nil // get, port-forward: nothing to apply
	}
	name = rest[3]
	if name == "" {
		return fmt.Errorf("a secret with no name")
	}
	s := docsSecret{name: name, keys: map[string]string{}}
	for _, a := range rest[4:] {
		switch {
		case strings.HasPrefix(a, "--from-literal="):
			k, v, ok := strings.Cut(strings.TrimPrefix(a, "--from-literal="), "=")
			if !ok || k == "" {
				return fmt.Errorf("secret %s: %s has no key=value", name, a)
			}
			s.keys[k] = v
		case strings.HasPrefix(a, "--from-file="):
			f := strings.TrimPrefix(a, "--from-file=")
			k, _, ok := strings.Cut(f, "=")
			if !ok {
				k = filepath.Base(f)
			}
			if k == "" || k == "." || k == "/" {
				return fmt.Errorf("secret %s: %s names no key", name, a)
			}
			s.keys[k] = ""
		}
	}
	if len(s.keys) == 0 {
		return fmt.Errorf("secret %s: no --from-literal or --from-file", name)
	}
	if ns != "" && in.namespace != "" && ns != in.namespace {
		return fmt.Errorf("secret %s in namespace %s, not the release's %s", name, ns, in.namespace)
	}
	if slices.ContainsFunc(in.secrets, func(o docsSecret) bool { return o.name == s.name }) {
		in.alternatives = append(in.alternatives, s)
		return nil
	}
	in.secrets = append(in.secrets, s)
	return nil
}

// helmInstall records an install's values; it reports whether it installs this chart (the
// NATS chart's install is step 1's).
func (in *docsInstall) helmInstall(args []string) bool {
	chart := args[1]
	var sets, files []string
	for i := 2; i < len(args); i++ {
		a := args[i]
		flag, val, inline := strings.Cut(a, "=")
		if !inline && i+1 < len(args) {
			val = args[i+1]
		}
		switch flag {
		case "--set", "-f", "--values":
			if !inline {
				i++
			}
			if flag == "--set" {
				sets = append(sets, val)
			} else {
				files = append(files, val)
			}
		case "--namespace", "-n":
			if !inline {
				i++
			}
			if strings.HasSuffix(chart, "deploy/helm/bursar") && in.namespace == "" {
				in.namespace = val
			}
		}
	}
	if !strings.HasSuffix(chart, "deploy/helm/bursar") {
		in.natsSets, in.natsFiles = append(in.natsSets, sets...), append(in.natsFiles, files...)
		return false
	}
	in.sets, in.files = append(in.sets, sets...), append(in.files, files...)
	return true
}

// TestParseDocsRefusesMalformed: a page the parser cannot follow is an error naming the line,
// never a silent empty install.
func TestParseDocsRefusesMalformed(t *testing.T) {
	for _, tc := range []struct{ name, page, want string }{
		{"no section", "# Deploying\n", "From zero"},
		{"no install", "## From zero\n```\nkubectl create namespace bursar\n```\n", "no `helm install"},
		{"open quote", "## From zero\n```\nhelm install bursar deploy/helm/bursar --set a='b\n```\n", "line 3: unclosed '"},
		{"bad literal", "## From zero\n```\nkubectl -n b create secret generic s --from-literal=novalue\n```\n", "has no key=value"},
		{"empty secret", "## From zero\n```\nkubectl -n b create secret generic s\n```\n", "no --from-literal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseDocs(tc.page)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("parseDocs = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestDocsDeployParses: docs/deploy.md keeps a form the e2e tests can follow: the release's
// namespace, its Secrets and the chart's install, with every -f file given on the page or in
// testdata.
func TestDocsDeployParses(t *testing.T) {
	in := readDocs(t)
	if in.namespace == "" || len(in.secrets) == 0 {
		t.Fatalf("docs/deploy.md: no namespace or no Secret in the From zero steps: %+v", in)
	}
	for _, f := range in.files {
		if _, ok := in.bodies[f]; ok {
			continue
		}
		if _, err := os.Stat(filepath.Join("testdata", filepath.Base(f))); err != nil {
			t.Errorf("the install takes -f %s, which the page does not give and testdata does not hold", f)
		}
	}
}

// FuzzParseDocs: any page parses into an install whose Secrets each have named keys, or is
// refused with an error; it never panics.
func FuzzParseDocs(f *testing.F) {
	b, err := os.ReadFile(docsFile)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add("## From zero\n```\nhelm install b deploy/helm/bursar -n x --set 'a=b' \\\n -f v.yaml &\n```\n")
	f.Add("## From zero\n```\nkubectl -n x create secret generic s --from-literal==v\nhelm install b deploy/helm/bursar\n```\n")
	f.Fuzz(func(t *testing.T, page string) {
		in, err := parseDocs(page)
		if err != nil {
			return
		}
		for _, s := range in.secrets {
			if s.name == "" || len(s.keys) == 0 || slices.Contains(slices.Collect(maps.Keys(s.keys)), "") {
				t.Fatalf("secret %+v: a Secret without a name or with an empty key was accepted", s)
			}
		}
	})
}
