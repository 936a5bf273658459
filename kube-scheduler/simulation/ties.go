package simulation

// Ties: the scheduling cycle's random draws come from a source of its own.
//
// kube-scheduler v1.34 draws from math/rand's global source in two places that decide: selectHost breaks score
// ties between nodes (reservoir sampling over the nodes of the highest score), and DefaultPreemption picks the
// node its dry run starts from (getOffsetRand). The build seeds that global source at each cycle from the pod and
// its attempt (idle.go). But other goroutines of the process draw from the same source at wall-clock moments: a
// client-go reflector draws its watch's timeout (5 to 10 min) each time a watch ends and starts again, and
// wait.Jitter draws for the reflectors' and the event broadcaster's retries. One such draw between the seed and
// the tie draw gave the cycle another node. Runs of over 5 min of wall time (5,000 pods on 100 nodes, under load)
// parted now and then, and a goroutine drawing every 200 us (--draw-races) changed every run.
//
// So each cycle draws from a private source, seeded as the global one was and advanced as it was (the metrics
// sample ScheduleOne draws first), which gives the draws the global source gave when no other goroutine drew:
//   - the tie: the profile's framework is wrapped for SchedulePod, and its RunScorePlugins, once the scores are
//     made, runs selectHost's own reservoir sampling (the same heap, the same order, the same draws) on a copy
//     with the private source, then raises the chosen node's total score by one above the others. selectHost then
//     meets no tie, draws nothing, and returns that node. Only without extenders (they add their scores after
//     RunScorePlugins) and with Score plugins (without, prioritizeNodes gives every node the score 1 itself): in
//     those cases the global source, seeded per cycle, still decides;
//   - the preemption offset: DefaultPreemption's getOffsetRand, a package variable "so it can be overridden",
//     draws from the private source on the scheduling goroutine (and from the global source elsewhere).
// The global source is still seeded per cycle, for any other draw (an out-of-tree plugin's).

import (
	"container/heap"
	"context"
	"math/rand"
	"sync/atomic"
	"time"
	_ "unsafe" // go:linkname

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	_ "k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption" // getOffsetRand below
)

// offsetRand is DefaultPreemption's getOffsetRand (rand.Int31n by default).
//
//go:linkname offsetRand k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption.getOffsetRand
var offsetRand func(int32) int32

// cycleRand is the current scheduling cycle's private source (nil outside the facade's cycles).
var cycleRand atomic.Pointer[cycleSource]

func init() {
	global := offsetRand
	offsetRand = func(n int32) int32 {
		if source := cycleRand.Load(); source != nil {
			return source.get().Int31n(n)
		}
		return global(n)
	}
}

// cycleSource is a scheduling cycle's private source, seeded and advanced (the metrics sample) at its first draw:
// the same draws as a source made at the start of the cycle, but most cycles (the failures) draw nothing, and a
// new math/rand source is 4.9 KB to allocate and 607 values to seed. One is reused from cycle to cycle: Seed
// gives it the state of rand.NewSource(seed).
type cycleSource struct {
	seed   int64
	seeded bool
	source *rand.Rand
}

func newCycleSource() *cycleSource {
	return &cycleSource{source: rand.New(rand.NewSource(0))} //nolint:gosec // ties, not secrets
}

// reset makes it the source of the cycle seeded with seed, not seeded yet.
func (c *cycleSource) reset(seed int64) {
	c.seed, c.seeded = seed, false
}

func (c *cycleSource) get() *rand.Rand {
	if !c.seeded {
		c.source.Seed(c.seed)
		c.source.Intn(100) // ScheduleOne's metrics sample, drawn before the cycle's own draws (idle.go)
		c.seeded = true
	}
	return c.source
}

// tieFramework is the profile's framework during one SchedulePod: its RunScorePlugins settles the ties.
type tieFramework struct {
	framework.Framework
	source *cycleSource
}

func (t tieFramework) RunScorePlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod,
	nodes []fwk.NodeInfo) ([]framework.NodePluginScores, *fwk.Status) {
	scores, status := t.Framework.RunScorePlugins(ctx, state, pod, nodes)
	if status.IsSuccess() && len(scores) > 1 {
		chosen := selectHostIndex(scores, t.source.get())
		top := scores[chosen].TotalScore
		for i := range scores {
			top = max(top, scores[i].TotalScore)
		}
		scores[chosen].TotalScore = top + 1
	}
	return scores, status
}

// selectHostIndex is the index in scores of the node selectHost (pkg/scheduler/schedule_one.go, v1.34) picks when
// its draws come from source: the same heap of the total scores, popped in the same order, the same reservoir
// sampling over the nodes of the highest score.
func selectHostIndex(scores []framework.NodePluginScores, source *rand.Rand) int {
	h := make(indexHeap, len(scores))
	for i := range scores {
		h[i] = indexedScore{scores[i].TotalScore, i}
	}
	heap.Init(&h)
	top := heap.Pop(&h).(indexedScore)
	selected, count := top, 1
	for h.Len() > 0 {
		next := heap.Pop(&h).(indexedScore)
		if next.score != top.score {
			break // selectHost goes on popping only to report the next best nodes: no draw
		}
		count++
		if source.Intn(count) == 0 {
			selected = next
		}
	}
	return selected.index
}

type indexedScore struct {
	score int64
	index int
}

// indexHeap orders as selectHost's nodeScoreHeap (Less: the higher total score first).
type indexHeap []indexedScore

func (h indexHeap) Len() int           { return len(h) }
func (h indexHeap) Less(i, j int) bool { return h[i].score > h[j].score }
func (h indexHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }

func (h *indexHeap) Push(x interface{}) { *h = append(*h, x.(indexedScore)) }

func (h *indexHeap) Pop() interface{} {
	old := *h
	n := len(old)
	x := old[n-1]
	*h = old[:n-1]
	return x
}

// drawRaces is --draw-races: how often drawFromGlobal draws (0: never).
var drawRaces time.Duration

// drawFromGlobal draws from math/rand's global source every period until ctx ends: other goroutines' draws, made
// frequent (testing only).
func drawFromGlobal(ctx context.Context, period time.Duration) {
	ticker := time.NewTicker(period)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			rand.Int63() //nolint:gosec // a draw, not a secret
		}
	}
}
