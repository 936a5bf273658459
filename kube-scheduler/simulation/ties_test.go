package simulation

import (
	"container/heap"
	"math/rand"
	"testing"

	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
)

// upstreamSelectHost is selectHost of kube-scheduler v1.34 (pkg/scheduler/schedule_one.go), its draws taken from
// source instead of math/rand's global source, and its heap type renamed.
func upstreamSelectHost(nodeScoreList []framework.NodePluginScores, count int,
	source *rand.Rand) (string, []framework.NodePluginScores) {
	var h upstreamHeap = nodeScoreList
	heap.Init(&h)
	cntOfMaxScore := 1
	selectedIndex := 0
	sortedNodeScoreList := make([]framework.NodePluginScores, 0, count)
	sortedNodeScoreList = append(sortedNodeScoreList, heap.Pop(&h).(framework.NodePluginScores))
	for ns := heap.Pop(&h).(framework.NodePluginScores); ; ns = heap.Pop(&h).(framework.NodePluginScores) {
		if ns.TotalScore != sortedNodeScoreList[0].TotalScore && len(sortedNodeScoreList) == count {
			break
		}
		if ns.TotalScore == sortedNodeScoreList[0].TotalScore {
			cntOfMaxScore++
			if source.Intn(cntOfMaxScore) == 0 {
				selectedIndex = cntOfMaxScore - 1
			}
		}
		sortedNodeScoreList = append(sortedNodeScoreList, ns)
		if h.Len() == 0 {
			break
		}
	}
	if selectedIndex != 0 {
		previous := sortedNodeScoreList[0]
		sortedNodeScoreList[0] = sortedNodeScoreList[selectedIndex]
		sortedNodeScoreList[selectedIndex] = previous
	}
	if len(sortedNodeScoreList) > count {
		sortedNodeScoreList = sortedNodeScoreList[:count]
	}
	return sortedNodeScoreList[0].Name, sortedNodeScoreList
}

type upstreamHeap []framework.NodePluginScores

func (h upstreamHeap) Len() int           { return len(h) }
func (h upstreamHeap) Less(i, j int) bool { return h[i].TotalScore > h[j].TotalScore }
func (h upstreamHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }

func (h *upstreamHeap) Push(x interface{}) { *h = append(*h, x.(framework.NodePluginScores)) }

func (h *upstreamHeap) Pop() interface{} {
	old := *h
	n := len(old)
	x := old[n-1]
	*h = old[0 : n-1]
	return x
}

// The node the tie framework makes the only one of the highest score is the one selectHost picks with the same
// draws, on 2,000 random score lists full of ties; and selectHost, given the raised scores, picks it with no draw.
func TestTiesAreSelectHostsWithTheCyclesOwnDraws(t *testing.T) {
	random := rand.New(rand.NewSource(1))
	for round := 0; round < 2000; round++ {
		scores := make([]framework.NodePluginScores, 2+random.Intn(60))
		for i := range scores {
			scores[i] = framework.NodePluginScores{Name: string(rune('a'+i%26)) + string(rune('0'+i/26)),
				TotalScore: int64(random.Intn(1 + random.Intn(6)))}
		}
		seed := random.Int63()
		want, _ := upstreamSelectHost(append([]framework.NodePluginScores(nil), scores...), 3,
			rand.New(rand.NewSource(seed)))
		chosen := selectHostIndex(scores, rand.New(rand.NewSource(seed)))
		if scores[chosen].Name != want {
			t.Fatalf("round %d: %s chosen, selectHost picks %s", round, scores[chosen].Name, want)
		}
		scores[chosen].TotalScore = 1 + slicesMax(scores)
		source := rand.New(rand.NewSource(seed))
		before := source.Int63()
		source = rand.New(rand.NewSource(seed))
		got, _ := upstreamSelectHost(scores, 3, source)
		if got != want || source.Int63() != before {
			t.Fatalf("round %d: raised, selectHost picks %s (want %s) or draws", round, got, want)
		}
	}
}

func slicesMax(scores []framework.NodePluginScores) int64 {
	top := scores[0].TotalScore
	for _, s := range scores {
		top = max(top, s.TotalScore)
	}
	return top
}

// DefaultPreemption's offset comes from the cycle's source when one is set, from the global source otherwise.
func TestPreemptionOffsetDrawsFromTheCyclesSource(t *testing.T) {
	plugin := &defaultpreemption.DefaultPreemption{}
	source := newCycleSource()
	source.reset(42)
	cycleRand.Store(source)
	defer cycleRand.Store(nil)
	want := rand.New(rand.NewSource(42))
	want.Intn(100) // the metrics sample
	for i := 0; i < 100; i++ {
		if got, _ := plugin.GetOffsetAndNumCandidates(1000); got != want.Int31n(1000) {
			t.Fatalf("draw %d: offset %d is not the cycle source's", i, got)
		}
	}
}

// A cycle's source, reused and seeded at its first draw, draws what a source made and advanced at the start of
// the cycle drew, whatever the previous cycles drew from it.
func TestAReusedCycleSourceDrawsAsANewOne(t *testing.T) {
	source := newCycleSource()
	for seed := int64(0); seed < 200; seed++ {
		source.reset(seed * 7919)
		want := rand.New(rand.NewSource(seed * 7919))
		want.Intn(100)
		for i := 0; i < int(seed%13); i++ {
			if got, wanted := source.get().Intn(i+1), want.Intn(i+1); got != wanted {
				t.Fatalf("seed %d, draw %d: %d, want %d", seed, i, got, wanted)
			}
		}
	}
}
