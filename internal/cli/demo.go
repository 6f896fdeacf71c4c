package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"

	"mcpx/internal/demo"
	"mcpx/internal/hoststream"
)

func cmdDemo() *command {
	return &command{
		name:  "demo",
		usage: "[demo flags]",
		short: "run the bundled demo MCP server on stdio (the default upstream)",
		long: `
Demo is a small MCP server on stdin/stdout, speaking every protocol revision:
a slow export with progress, a scan of unknown length, a tool that ignores
cancellation, a tool that records cancellations, and others that tests use.
It is the upstream mcpx runs when no config file exists. With -http ADDR it
serves Streamable HTTP at http://ADDR/mcp instead, both eras on one
endpoint. Run "mcpx demo -h" for its flags.`,
		rawArgs: true, // the demo parses its own flags
		run: func(ctx context.Context, env *Env, args []string) error {
			var usage bytes.Buffer
			opts, err := demo.ParseFlags(args, &usage)
			if errors.Is(err, flag.ErrHelp) {
				// -h asks for the demo's own flags: help, not a mistake.
				_, err = env.Stdout.Write(usage.Bytes())
				return err
			}
			if err != nil {
				return usagef("%v", err)
			}
			opts.Logger = slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			if opts.Exit == nil {
				opts.Exit = os.Exit
			}
			if opts.HTTP != "" {
				// stdin is only watched for its end. This process's stdin
				// is made non-blocking, so that closing it (on a signal)
				// interrupts the read.
				in := env.Stdin
				if f, ok := in.(*os.File); ok && f == os.Stdin {
					s := hoststream.NewStdio(env.Stdin, env.Stdout)
					defer s.Close()
					in = s
				}
				return demo.ServeHTTP(ctx, in, env.Stdout, opts)
			}
			return demo.Serve(ctx, env.Stdin, env.Stdout, opts)
		},
	}
}

func cmdVersion() *command {
	return &command{
		name:   "version",
		noArgs: true,
		short:  "print the version",
		long:   "Version prints mcpx's version.",
		run: func(ctx context.Context, env *Env, args []string) error {
			_, err := env.Stdout.Write([]byte("mcpx " + env.Version + "\n"))
			return err
		},
	}
}
