package fakeclock

import (
	"sync"
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	t0 := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		clock *Clock
		move  func(c *Clock) // before the readings
		want  []time.Time    // successive Now readings
	}{
		{name: "stands still", clock: New(t0),
			move: func(*Clock) {}, want: []time.Time{t0, t0, t0}},
		{name: "advance", clock: New(t0),
			move: func(c *Clock) { c.Advance(time.Minute); c.Advance(time.Second) },
			want: []time.Time{t0.Add(61 * time.Second), t0.Add(61 * time.Second)}},
		{name: "advance backwards", clock: New(t0),
			move: func(c *Clock) { c.Advance(-time.Hour) }, want: []time.Time{t0.Add(-time.Hour)}},
		{name: "set", clock: New(t0),
			move: func(c *Clock) { c.Advance(time.Hour); c.Set(t0.Add(time.Second)) },
			want: []time.Time{t0.Add(time.Second), t0.Add(time.Second)}},
		{name: "stepping: first reading is the start", clock: NewStepping(t0, 1234*time.Millisecond),
			move: func(*Clock) {},
			want: []time.Time{t0, t0.Add(1234 * time.Millisecond), t0.Add(2468 * time.Millisecond)}},
		{name: "stepping after advance", clock: NewStepping(t0, time.Second),
			move: func(c *Clock) { c.Advance(time.Minute) },
			want: []time.Time{t0.Add(time.Minute), t0.Add(time.Minute + time.Second)}},
		{name: "stepping after set", clock: NewStepping(t0, time.Second),
			move: func(c *Clock) { c.Set(t0.Add(time.Hour)) },
			want: []time.Time{t0.Add(time.Hour), t0.Add(time.Hour + time.Second)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.move(tt.clock)
			for i, want := range tt.want {
				if got := tt.clock.Now(); !got.Equal(want) {
					t.Fatalf("reading %d: Now() = %v, want %v", i+1, got, want)
				}
			}
		})
	}
}

// TestConcurrent: readings and moves from many goroutines lose no step and no
// advance (run with -race to also check the locking).
func TestConcurrent(t *testing.T) {
	t0 := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	c := NewStepping(t0, time.Millisecond)
	const workers, n = 8, 100
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range n {
				c.Now()
				c.Advance(time.Second)
			}
		})
	}
	wg.Wait()
	want := t0.Add(workers * n * (time.Second + time.Millisecond))
	if got := c.Now(); !got.Equal(want) {
		t.Errorf("after %d readings and advances: Now() = %v, want %v", workers*n, got, want)
	}
}
