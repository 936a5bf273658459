package simulation

import (
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// The lowest priority kept per node and NodeInfo generation is the one a walk of the node's pods finds, through
// pods added and removed at random (2,000 steps on 3 nodes, snapshots compared as the cache's clones).
func TestLowestPriorityKeptPerGenerationIsTheWalksOne(t *testing.T) {
	random := rand.New(rand.NewSource(1))
	p := noVictimsPreemption{lowest: map[string]lowest{}}
	nodes := make([]*framework.NodeInfo, 3)
	for i := range nodes {
		nodes[i] = framework.NewNodeInfo()
		nodes[i].SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: string(rune('a' + i))}})
	}
	for step := 0; step < 2000; step++ {
		node := nodes[random.Intn(len(nodes))]
		if pods := node.GetPods(); len(pods) > 0 && random.Intn(2) == 0 {
			if err := node.RemovePod(klog.Background(), pods[random.Intn(len(pods))].GetPod()); err != nil {
				t.Fatal(err)
			}
		} else if random.Intn(4) > 0 {
			priority := int32(random.Intn(5))
			node.AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", UID: types.UID(rune(step))},
				Spec: v1.PodSpec{Priority: &priority}})
		}
		for _, info := range nodes {
			want := lowest{}
			for _, pod := range info.GetPods() {
				if priority := *pod.GetPod().Spec.Priority; !want.pods || priority < want.priority {
					want.priority, want.pods = priority, true
				}
			}
			got := p.lowestPriority(info.Snapshot())
			if got.pods != want.pods || (want.pods && got.priority != want.priority) {
				t.Fatalf("step %d, node %s: kept %+v, walk %+v", step, info.Node().Name, got, want)
			}
		}
	}
}
