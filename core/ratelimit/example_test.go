package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/kobana/kadu/core/ratelimit"
)

// A single node limits in memory. Here every organisation's plan allows
// 6 requests per minute: a burst of one, then one every 10 seconds.
func Example() {
	now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	l, err := ratelimit.New(ratelimit.Options{
		PerMinute: func(ctx context.Context, orgID string) (int, error) { return 6, nil },
		Now:       func() time.Time { return now },
	})
	if err != nil {
		panic(err)
	}
	defer l.Close()

	ctx := context.Background()
	for range 2 {
		ok, retryAfter := l.AllowOrg(ctx, "org_1")
		fmt.Println(ok, retryAfter)
	}
	now = now.Add(10 * time.Second)
	fmt.Println(l.AllowOrg(ctx, "org_1"))
	// Output:
	// true 0s
	// false 10s
	// true 0s
}
