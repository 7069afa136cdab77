package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/bursar-dev/bursar/internal/bus"
	"github.com/bursar-dev/bursar/internal/cli"
)

// newStreamsCmd is `report streams`: what the event streams hold, to check that events flow.
func newStreamsCmd(g *cli.Globals) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "streams",
		Short: "Show Bursar's event streams: messages, bytes, consumers and the newest message",
		Example: `  report streams
  report streams -o json --nats nats://nats-1:4222`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := g.Logger(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			nc, js, err := g.Dial(ctx, "", bus.RoleReport, "report", log)
			if err != nil {
				return err
			}
			defer nc.Close()
			var rows []cli.Row
			for _, cfg := range bus.Streams(bus.Options{}) {
				s, err := js.Stream(ctx, cfg.Name)
				if err != nil {
					return fmt.Errorf("stream %s: %w (has `arbiter run` started once against this NATS?)", cfg.Name, err)
				}
				st := s.CachedInfo().State
				last := ""
				if st.Msgs > 0 {
					last = st.LastTime.UTC().Format(time.RFC3339)
				}
				rows = append(rows, cli.Row{"stream": cfg.Name, "messages": st.Msgs, "bytes": st.Bytes,
					"consumers": st.Consumers, "newest": last})
			}
			return cli.Write(cmd.OutOrStdout(), output, []string{"stream", "messages", "bytes", "consumers", "newest"}, rows)
		},
	}
	cli.OutputFlag(cmd, &output, cli.Formats...)
	return cmd
}
