package db

import (
	"context"
	"time"
)

// bounded returns ctx limited to d (ctx itself when d <= 0).
func bounded(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// stmt bounds one statement by the statement timeout.
func (o Options) stmt(ctx context.Context) (context.Context, context.CancelFunc) {
	return bounded(ctx, o.StatementTimeout)
}

// connect bounds establishing one session by the connect timeout.
func (o Options) connect(ctx context.Context) (context.Context, context.CancelFunc) {
	return bounded(ctx, o.ConnectTimeout)
}

// cancelRows is a result set whose statement context ends when it closes:
// a Query's context must outlive Query itself (rows are read after it
// returns) but not the rows.
type cancelRows struct {
	Rows
	cancel context.CancelFunc
}

func (r cancelRows) Close() {
	r.Rows.Close()
	r.cancel()
}
