package agent

import (
	"context"
	"fmt"
	"sync"
)

// memSink is an in-memory Sink for tests. It enforces capCents (0 = none)
// like a worker enforcing the organisation's monthly cap: the charge is
// recorded, then ErrCostCap reported.
type memSink struct {
	mu       sync.Mutex
	capCents int64
	failStep error // returned by RecordStep when set

	events  []Step // every RecordStep call, in order
	steps   map[string]Step
	charges []int64
	total   int64
	files   map[string]memFile
	order   []string // file ids in write order
}

type memFile struct {
	name, contentType string
	data              []byte
}

var _ Sink = (*memSink)(nil)

func newMemSink() *memSink {
	return &memSink{steps: map[string]Step{}, files: map[string]memFile{}}
}

func (s *memSink) RecordStep(_ context.Context, st Step) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failStep != nil {
		return s.failStep
	}
	s.events = append(s.events, st)
	s.steps[st.ID] = st
	return nil
}

func (s *memSink) Charge(_ context.Context, cents int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.charges = append(s.charges, cents)
	s.total += cents
	if s.capCents > 0 && s.total > s.capCents {
		return fmt.Errorf("organisation used %d of %d centavos this month: %w", s.total, s.capCents, ErrCostCap)
	}
	return nil
}

func (s *memSink) WriteFile(_ context.Context, name, contentType string, data []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprintf("file_%d", len(s.files)+1)
	s.files[id] = memFile{name: name, contentType: contentType, data: append([]byte(nil), data...)}
	s.order = append(s.order, id)
	return id, nil
}

// fileNamed returns the content of the written file with that name.
func (s *memSink) fileNamed(name string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range s.order {
		if s.files[id].name == name {
			return s.files[id].data, true
		}
	}
	return nil, false
}

func (s *memSink) chargesCopy() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.charges...)
}
