package simulation

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// The nominator with cleared nominations unlisted holds the same pods as upstream's for every node; upstream's
// differs only by its list under node "".
func TestClearedNominationsLeaveEveryNodesPodsAsUpstream(t *testing.T) {
	metrics.Register()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pods []*v1.Pod
	var objects []runtime.Object
	for _, name := range []string{"p1", "p2", "p3", "p4"} {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}}
		pods = append(pods, pod)
		objects = append(objects, pod)
	}
	less := func(fwk.QueuedPodInfo, fwk.QueuedPodInfo) bool { return false }
	upstream := queue.NewTestQueueWithObjects(ctx, less, objects)
	unlisted := nominatorQueue{queue.NewTestQueueWithObjects(ctx, less, objects), &atomic.Int64{}}
	to := func(node string) *framework.NominatingInfo {
		return &framework.NominatingInfo{NominatingMode: framework.ModeOverride, NominatedNodeName: node}
	}
	steps := []struct {
		pod  int
		info *framework.NominatingInfo
	}{{0, to("node-a")}, {1, to("")}, {2, to("node-b")}, {0, to("")}, {3, to("")}, {2, to("")}, {3, to("node-a")},
		{1, nil}}
	logger := klog.Background()
	for i, step := range steps {
		info, _ := framework.NewPodInfo(pods[step.pod])
		upstream.AddNominatedPod(logger, info, step.info)
		unlisted.AddNominatedPod(logger, info, step.info)
		updated, _ := framework.NewPodInfo(pods[step.pod].DeepCopy())
		upstream.UpdateNominatedPod(logger, pods[step.pod], updated)
		unlisted.UpdateNominatedPod(logger, pods[step.pod], updated)
		for _, node := range []string{"node-a", "node-b"} {
			got, want := names(unlisted.NominatedPodsForNode(node)), names(upstream.NominatedPodsForNode(node))
			if !slices.Equal(got, want) {
				t.Fatalf("step %d, %s: nominated %v, upstream %v", i, node, got, want)
			}
		}
		if got := names(unlisted.NominatedPodsForNode("")); len(got) > 0 {
			t.Fatalf("step %d: listed under node \"\": %v", i, got)
		}
	}
	if got := names(upstream.NominatedPodsForNode("")); !slices.Equal(got, []string{"p1", "p3"}) {
		t.Fatalf("upstream's list under node \"\" is %v (the test's premise)", got)
	}
	if got := names(unlisted.NominatedPodsForNode("node-a")); !slices.Equal(got, []string{"p4"}) {
		t.Fatalf("node-a: %v", got)
	}
}

func names(infos []fwk.PodInfo) []string {
	var out []string
	for _, info := range infos {
		out = append(out, info.GetPod().Name)
	}
	return out
}
