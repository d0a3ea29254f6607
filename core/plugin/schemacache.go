package plugin

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
)

// passedCap bounds the documents a schema remembers as valid. A tool that
// is polled (kadu_executions_get on a running execution, a list read page
// after page) sends the same arguments and gets the same bytes back many
// times; past the cap the set is emptied and refills with what is hot.
const passedCap = 1024

// passedSet remembers the digests of documents that passed one compiled
// schema, so that bytes already validated are validated once: the same
// bytes against the same schema give the same answer. Only successes are
// kept (a failure is rare and must name its locations every time), and
// the digest covers the organisation too, so that one tenant's timing can
// never tell whether another's document was seen. A new version of a
// bundle compiles new schemas and starts empty.
type passedSet struct {
	mu  sync.Mutex
	set map[[sha256.Size]byte]struct{}
}

func passedKey(org string, doc []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(org))
	h.Write([]byte{0})
	h.Write(doc)
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

func (p *passedSet) has(k [sha256.Size]byte) bool {
	p.mu.Lock()
	_, ok := p.set[k]
	p.mu.Unlock()
	return ok
}

func (p *passedSet) add(k [sha256.Size]byte) {
	p.mu.Lock()
	if p.set == nil || len(p.set) >= passedCap {
		p.set = make(map[[sha256.Size]byte]struct{}, 64)
	}
	p.set[k] = struct{}{}
	p.mu.Unlock()
}

// check is validate for a document of org, answered from the set of
// documents that already passed when it can be.
func (c *compiledSchema) check(org string, doc json.RawMessage) error {
	k := passedKey(org, doc)
	if c.passed.has(k) {
		return nil
	}
	if err := c.validate(doc); err != nil {
		return err
	}
	c.passed.add(k)
	return nil
}
