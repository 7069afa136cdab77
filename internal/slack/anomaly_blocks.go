package slack

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/bursar-dev/bursar/internal/anomaly"
	"github.com/bursar-dev/bursar/internal/events"
)

// AnomalyOpened is a cost.anomaly event (its open) as a Slack message.
type AnomalyOpened struct{ *events.CostAnomaly }

func (a AnomalyOpened) Text() string {
	return fmt.Sprintf("Cost anomaly: %s at %.2f %s%s, %.2f expected", a.Series, a.Observed, a.Currency, a.per(), a.Expected)
}

// per is the unit of the anomaly's figures: spend per hour, or a unit price per GPU-hour.
func (a AnomalyOpened) per() string {
	if strings.HasSuffix(a.Series, anomaly.UnitPriceSuffix) {
		return "/GPU-h"
	}
	return "/h"
}

// Blocks are the message without its buttons.
func (a AnomalyOpened) Blocks() []slack.Block {
	moved := "—"
	if len(a.Moved) > 0 {
		moved = escape(strings.Join(a.Moved, "\n"))
	}
	ratio := ""
	if a.Expected > 0 {
		ratio = fmt.Sprintf(" (×%.1f)", a.Observed/a.Expected)
	}
	return []slack.Block{
		header("Cost anomaly: " + a.Series),
		fields("Now", fmt.Sprintf("%.2f %s%s%s", a.Observed, a.Currency, a.per(), ratio),
			"Expected", fmt.Sprintf("%.2f %s%s", a.Expected, a.Currency, a.per()),
			"Since", when(a.Start),
			"Impact so far", fmt.Sprintf("%.2f %s", a.Impact, a.Currency),
			"What moved", moved),
		note("Expected quiets this cause from now on; `report anomalies` lists every anomaly."),
	}
}

// withButtons adds Expected and Not expected, each carrying value.
func (a AnomalyOpened) withButtons(value string) []slack.Block {
	blocks := a.Blocks()
	yes := slack.NewButtonBlockElement(ActionExpected, value, plain("Expected"))
	no := withStyle(slack.NewButtonBlockElement(ActionNotExpected, value, plain("Not expected")), slack.StyleDanger)
	return append(blocks, slack.NewActionBlock("bursar_anomaly", yes, no))
}

// answeredBlocks are the message's blocks with the buttons replaced by who answered what; from
// its text alone when the click did not carry the blocks.
func answeredBlocks(was []slack.Block, text string, ans AnomalyAnswer) []slack.Block {
	var out []slack.Block
	for _, b := range was {
		if b.BlockType() != slack.MBTAction {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		out = append(out, section(escape(text)))
	}
	word := "*not expected*"
	if ans.Expected {
		word = "*expected*: repeats of this cause are no longer posted"
	}
	return append(out, note(fmt.Sprintf("Marked %s by %s, %s", word, mention(ans.Actor), when(ans.At))))
}
