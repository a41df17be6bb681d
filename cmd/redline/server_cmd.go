package main

import (
	"io"

	"github.com/spf13/cobra"
)

func newServerCmd(stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "server [redis.conf] [--directive value ...]",
		Short: "Run one node of the bundled reference Redis-Cluster server",
		Long: `Run one node of the reference server, redline's own implementation of Redis
Cluster. It takes redis-server's arguments: an optional redis.conf path, then
--directive value pairs (e.g. --port 7000 --cluster-enabled yes).`,
		DisableFlagParsing: true,
		RunE: func(_ *cobra.Command, args []string) error {
			if code := serverMain(args, stdout, stderr); code != 0 {
				return verdict{code}
			}
			return nil
		},
	}
}
