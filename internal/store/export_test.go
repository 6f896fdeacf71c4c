package store

import "context"

// TerminateListeners ends the server sessions that LISTEN on s's cancel
// channel, as a server restart would, and returns how many it ended.
func (s *Postgres) TerminateListeners(ctx context.Context) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND query LIKE 'LISTEN %' AND query LIKE '%' || $1 || '%'`, s.channel).Scan(&n)
	return n, err
}
