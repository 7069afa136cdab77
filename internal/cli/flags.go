package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// AnnotationOutput marks a command that prints data; its value lists the formats of its
// -o/--output flag, so a test can check that every such command offers the same ones.
const AnnotationOutput = "bursar/output"

// OutputFlag adds -o/--output to cmd, holding one of formats (the first is the default). An
// unknown format is refused while the flags are parsed, before the command opens anything.
func OutputFlag(cmd *cobra.Command, p *string, formats ...string) {
	*p = formats[0]
	v := &formatValue{p: p, formats: formats}
	cmd.Flags().VarP(v, "output", "o", "output format: "+Or(formats))
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[AnnotationOutput] = strings.Join(formats, ",")
}

// formatValue is a string flag limited to a list of formats.
type formatValue struct {
	p       *string
	formats []string
}

func (v *formatValue) String() string { return *v.p }

func (v *formatValue) Type() string { return "format" }

func (v *formatValue) Set(s string) error {
	if !slices.Contains(v.formats, s) {
		return fmt.Errorf("want %s", Or(v.formats))
	}
	*v.p = s
	return nil
}

// Or joins items as "a, b or c", for help text and errors.
func Or(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
