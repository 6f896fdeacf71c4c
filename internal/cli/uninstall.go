package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"

	"mcpx/internal/hostconfig"
)

func cmdUninstall() *command {
	var dryRun, force bool
	return &command{
		name:  "uninstall",
		usage: "[flags] HOST",
		short: "put back a host's config as it was before mcpx install",
		long: `
Uninstall undoes mcpx install HOST. If the host's file is as install left
it, the file as it was before is put back byte for byte (or removed, if
install created it). If the file changed since (the host or the user
edited it), only the "mcpx" server is removed, so that nothing written
since is lost, and the backup is kept and named; --force puts the backup
back all the same. Servers that install --move took into mcpx's config
stay there. A unified diff is printed every time.`,
		setFlags: func(fs *flag.FlagSet) {
			fs.BoolVar(&dryRun, "dry-run", false, "print the diff, change nothing")
			fs.BoolVar(&force, "force", false, "put the backup back even if the file changed since install")
		},
		run: func(ctx context.Context, env *Env, args []string) error {
			h, err := oneHost(args)
			if err != nil {
				return err
			}
			in := &installer{env: env, h: h}
			if err := in.locate(""); err != nil {
				return err
			}
			rec, err := in.readRecord()
			if err != nil {
				return err
			}
			if rec == nil {
				return &exitError{code: ExitToolError, err: fmt.Errorf("mcpx install %s left no record in %s: nothing to undo", h.Name, in.recordFile())}
			}
			in.file = rec.File
			current, existed, err := readMaybe(rec.File)
			if err != nil {
				return err
			}
			backup, err := os.ReadFile(in.backupFile())
			if err != nil {
				return fmt.Errorf("reading the backup: %w", err)
			}
			restore := force || (existed && sum(current) == rec.Installed)
			var after []byte
			if restore {
				after = backup
			} else {
				after, err = h.Edit(current, nil, []string{"mcpx"})
				if err != nil {
					return &exitError{code: ExitToolError, err: fmt.Errorf("%s changed since install, and removing the mcpx server failed: %w (the backup is %s; --force puts it back)", rec.File, err, in.backupFile())}
				}
			}
			printDiff(env.Stdout, hostconfig.Diff("a"+rec.File, "b"+rec.File, current, after))
			if dryRun {
				return nil
			}
			switch {
			case restore && !rec.Existed:
				// A link to nothing yet stays: install wrote the file it
				// leads to.
				created, err := followLinks(rec.File)
				if err != nil {
					return err
				}
				if err := os.Remove(created); err != nil && existed {
					return err
				}
				fmt.Fprintf(env.Stdout, "removed %s, which mcpx install had created\n", rec.File)
			case restore:
				if err := writeFile(rec.File, backup, 0o600); err != nil {
					return err
				}
				fmt.Fprintf(env.Stdout, "put back %s as it was before mcpx install\n", rec.File)
			default:
				if !bytes.Equal(current, after) {
					if err := writeFile(rec.File, after, 0o600); err != nil {
						return err
					}
				}
				fmt.Fprintf(env.Stdout, "%s changed since mcpx install: removed only the mcpx server; the file as it was before install is still in %s\n", rec.File, in.backupFile())
				if len(rec.Moved) > 0 {
					fmt.Fprintf(env.Stdout, "the servers moved into mcpx (%v) are not put back into the host's file\n", rec.Moved)
				}
				return os.Remove(in.recordFile())
			}
			if len(rec.Moved) > 0 {
				fmt.Fprintf(env.Stdout, "the servers moved into mcpx's config stay there too: %v\n", rec.Moved)
			}
			if err := os.Remove(in.backupFile()); err != nil {
				return err
			}
			return os.Remove(in.recordFile())
		},
	}
}
