package clitest

import (
	"strings"
	"testing"
)

func TestCommandsIn(t *testing.T) {
	doc := "Run `arbiter record` or `arbiter budget list [-o table|json|yaml]`; the arbiter and `report` too.\n" +
		"```sh\n" +
		"$ ./bin/arbiter run --config x.yaml   # a comment\n" +
		"BURSAR_NATS=nats://h:4222 arbiter status -o json | jq .\n" +
		"arbiter budget set a --scope workload=w \\\n" +
		"  --limit 5\n" +
		"report cost > cost.txt\n" +
		"arbiter\n" +
		"```\n" +
		"`arbiter run` again, and `collector run` is another program's.\n"
	got := commandsIn("doc.md", []byte(doc), "arbiter")
	want := []string{
		"doc.md:1 record",
		"doc.md:1 budget list",
		"doc.md:3 run --config x.yaml",
		"doc.md:4 status -o json",
		"doc.md:5 budget set a --scope workload=w --limit 5",
		"doc.md:10 run",
	}
	var lines []string
	for _, c := range got {
		lines = append(lines, c.At+" "+strings.Join(c.Args, " "))
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands =\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestShellWords(t *testing.T) {
	got := shellWords(`report serve --schedule "0 9 * * MON" --subject 'FLEET=a.>'  x`)
	want := []string{"report", "serve", "--schedule", "0 9 * * MON", "--subject", "FLEET=a.>", "x"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("shellWords = %q, want %q", got, want)
	}
}
