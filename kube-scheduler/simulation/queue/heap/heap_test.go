package heap

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	upstream "k8s.io/kubernetes/pkg/scheduler/backend/heap"
)

// pod: what the scheduling queue's heaps hold, reduced to what PrioritySort reads.
type pod struct {
	name      string
	priority  int32
	timestamp time.Time
}

func podKey(p *pod) string { return p.name }

func podLess(p1, p2 *pod) bool { // PrioritySort.Less
	return (p1.priority > p2.priority) || (p1.priority == p2.priority && p1.timestamp.Before(p2.timestamp))
}

func podRank(p *pod) Rank { return Rank{Priority: p.priority, Timestamp: p.timestamp} }

// The build's heap, with and without ranks, against upstream's under the same random adds, updates, deletes and
// pops (timestamps drawn from few values, so that ties are common; priorities from three): every Pop, Peek, Get and
// Len gives the same answer.
func TestTheHeapPopsWhatUpstreamsPops(t *testing.T) {
	base := time.Now()
	for seed := int64(1); seed <= 200; seed++ {
		random := rand.New(rand.NewSource(seed))
		theirs := upstream.New(podKey, podLess)
		plain := New(podKey, podLess)
		ranked := NewRanked(podKey, podLess, podRank, nil)
		heaps := []*Heap[*pod]{plain, ranked}
		for step := 0; step < 400; step++ {
			name := fmt.Sprintf("default/pod-%d", random.Intn(60))
			switch op := random.Intn(10); {
			case op < 5: // add or update: a new object, as the queue's Update gives
				p := &pod{name, int32(random.Intn(3)), base.Add(time.Duration(random.Intn(20)) * time.Second)}
				theirs.AddOrUpdate(p)
				for _, h := range heaps {
					h.AddOrUpdate(p)
				}
			case op < 6:
				lookup := &pod{name: name}
				errTheirs := theirs.Delete(lookup)
				for _, h := range heaps {
					if err := h.Delete(lookup); (err == nil) != (errTheirs == nil) {
						t.Fatalf("seed %d step %d: Delete(%s): %v, upstream's %v", seed, step, name, err, errTheirs)
					}
				}
			default:
				want, errTheirs := theirs.Pop()
				for _, h := range heaps {
					got, err := h.Pop()
					if (err == nil) != (errTheirs == nil) || got != want {
						t.Fatalf("seed %d step %d: Pop: %v %v, upstream's %v %v", seed, step, got, err, want, errTheirs)
					}
				}
			}
			wantHead, wantOK := theirs.Peek()
			lookup := &pod{name: name}
			wantGot, wantHas := theirs.Get(lookup)
			for _, h := range heaps {
				head, ok := h.Peek()
				got, has := h.Get(lookup)
				if head != wantHead || ok != wantOK || got != wantGot || has != wantHas || h.Len() != theirs.Len() {
					t.Fatalf("seed %d step %d: heads %v / %v, lengths %d / %d", seed, step, head, wantHead, h.Len(),
						theirs.Len())
				}
			}
		}
	}
}
