package store

import (
	"context"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Reconnect delays of WatchCancels after its connection is lost.
const (
	listenRetryMin = 100 * time.Millisecond
	listenRetryMax = 5 * time.Second
)

// WatchCancels listens on the schema's cancel channel on a connection of
// its own (NOTIFY, no polling). A lost connection is made again, with a
// growing delay; once it is, the jobs cancelled since a little before it
// was lost are read and told too, since their notifications are gone.
func (s *Postgres) WatchCancels(ctx context.Context, fn func(id, why string)) error {
	var lost time.Time // zero until a connection has been lost
	delay := listenRetryMin
	for {
		err := s.listen(ctx, fn, &lost, func() { delay = listenRetryMin })
		if ctx.Err() != nil {
			return nil
		}
		if lost.IsZero() {
			lost = time.Now()
		}
		_ = err // the next attempt says whether the server is back
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		delay = min(2*delay, listenRetryMax)
	}
}

// listen runs one connection's LISTEN until it fails or ctx ends. Once
// listening, it catches up on what *lost says was missed and clears it.
func (s *Postgres) listen(ctx context.Context, fn func(id, why string), lost *time.Time, connected func()) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	conn := pc.Hijack() // ours alone: closed here, never back in the pool
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
		return err
	}
	connected()
	if !lost.IsZero() {
		// Rows' times are the writers' clocks: a margin for their skew.
		rows, err := conn.Query(ctx, `SELECT id, error FROM jobs WHERE status = 'cancelled' AND updated >= $1`,
			ms(lost.Add(-5*time.Second)))
		if err != nil {
			return err
		}
		type missed struct{ ID, Why string }
		all, err := pgx.CollectRows(rows, pgx.RowToStructByPos[missed])
		if err != nil {
			return err
		}
		for _, c := range all {
			fn(c.ID, c.Why)
		}
		*lost = time.Time{}
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		id, why, _ := strings.Cut(n.Payload, "\n")
		fn(id, why)
	}
}
