package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/neardup/neardup/store/pebblestore"
)

var backupCommand = &command{
	name:    "backup",
	summary: "write a consistent copy of the service's store, while it runs or not",
	about: `Writes a consistent copy of a neardup serve store to --out, a directory that must not
exist yet; "neardup serve --data OUT" starts from the copy with every document that was
acknowledged before the backup began.

A running service holds its store's lock, so only it can copy the store while it runs:
with --server URL the command asks the service (POST /v1/admin/backup, with the write
token in the environment variable NEARDUP_TOKEN when the service has tokens), and the
service writes the copy on its own machine, so --out is a path there. Adds go on
meanwhile. With --data DIR the command opens a store no service holds and copies it
itself; pointed at a store a service holds, it says so.

On the store's file system the copy hard-links the store's tables and copies its log
and manifest, so it takes seconds and little space until the store compacts the linked
tables away; elsewhere it copies everything. Copy the backup directory off the machine
with any tool once the command has returned: it is complete and synced then.
`,
	new: func() runner { return &backupCmd{} },
}

// backupCmd is "neardup backup".
type backupCmd struct {
	data    string
	out     string
	server  string
	timeout time.Duration
}

func (c *backupCmd) define(fs *flag.FlagSet) {
	fs.StringVar(&c.data, "data", "", "copy the store in `DIR`, which no running service holds (default \"\")")
	fs.StringVar(&c.server, "server", "", "ask the service at `URL` (http://HOST:PORT) to copy its store (default \"\")")
	fs.StringVar(&c.out, "out", "", "write the copy to `DIR`, which must not exist; with --server, a path on the\nservice's machine (default \"\")")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Minute, "with --server, give up after `D` (default 10m0s)")
}

func (c *backupCmd) run(e *env, args []string) error {
	switch {
	case len(args) > 0:
		return usagef("backup takes no arguments, not %q", args[0])
	case c.out == "":
		return usagef("--out: give the directory to write the copy to")
	case (c.data == "") == (c.server == ""):
		return usagef("give either --data DIR (a store no service holds) or --server URL (a running service)")
	}
	out, err := filepath.Abs(c.out)
	if err != nil {
		return fmt.Errorf("--out %s: %w", c.out, err)
	}
	start := time.Now()
	if c.server != "" {
		err = c.ask(out)
	} else {
		err = c.copy(out)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "backup written to %s in %.1f s\n", out, time.Since(start).Seconds())
	return nil
}

// copy opens the store at --data and checkpoints it to out.
func (c *backupCmd) copy(out string) error {
	if _, err := os.Stat(out); err == nil {
		return usagef("--out %s exists: name a directory that does not, so that no backup is overwritten", c.out)
	}
	if ok, err := pebblestore.Exists(c.data); err != nil || !ok {
		return usagef("--data %s holds no store", c.data)
	}
	// No watermark: a backup is how a full disk's store gets somewhere else.
	db, err := pebblestore.Open(c.data, pebblestore.Options{MinFree: -1, Logger: slog.New(slog.DiscardHandler)})
	if errors.Is(err, pebblestore.ErrLocked) {
		return fmt.Errorf("%w\nA running service holds it: ask it for the backup with neardup backup --server http://HOST:PORT --out %s", err, c.out)
	}
	if err != nil {
		return err
	}
	err = db.Checkpoint(out)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	return err
}

// ask has the service at --server write the copy to out.
func (c *backupCmd) ask(out string) error {
	url := strings.TrimSuffix(c.server, "/") + "/v1/admin/backup"
	body, _ := json.Marshal(map[string]string{"dir": out})
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
	if err != nil {
		return usagef("--server %s: %v", c.server, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if tok := os.Getenv("NEARDUP_TOKEN"); tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("--server %s: %w", c.server, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	var eb struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal(b, &eb) == nil && eb.Error.Message != "" {
		return fmt.Errorf("the service answered %d %s: %s", resp.StatusCode, eb.Error.Code, eb.Error.Message)
	}
	return fmt.Errorf("the service answered %s: %s", resp.Status, bytes.TrimSpace(b))
}
