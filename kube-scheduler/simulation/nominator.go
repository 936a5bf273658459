package simulation

// Nominations: the simulation build does not list a pod as nominated to no node.
//
// After every failed attempt that nominated nothing, the failure handler clears the pod's nomination
// (AddNominatedPod with ModeOverride and no node name). Upstream's nominator (v1.34, backend/queue/nominator.go)
// then drops the pod's nomination and lists the pod as nominated to node "": it scans that list, which holds every
// waiting pod, twice (to drop the pod, then to see whether it is there already), at every failed attempt, a cost
// that grows with the queue. Nothing reads that list: nominated pods are looked up by a node's name, and a node has
// one; only a pod update reads the pod's entry, to list it there again. The build drops the pod's nomination and
// lists it nowhere: the nominator holds the same pods for every node, and every plugin sees the same nominated pods.
// --clear-nominations-unlisted=false turns it off.

import (
	"sync/atomic"

	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// attachNominator puts nominatorQueue in sched.
func attachNominator(sched *scheduler.Scheduler) {
	sched.SchedulingQueue = nominatorQueue{sched.SchedulingQueue, &atomic.Int64{}}
}

// nominatorQueue is the scheduling queue; a nomination that clears the pod's drops it without listing the pod.
type nominatorQueue struct {
	queue.SchedulingQueue
	cleared *atomic.Int64
}

func (q nominatorQueue) AddNominatedPod(logger klog.Logger, pod fwk.PodInfo, nominatingInfo *framework.NominatingInfo) {
	if nominatingInfo.Mode() == framework.ModeOverride && nominatingInfo.NominatedNodeName == "" {
		q.SchedulingQueue.DeleteNominatedPodIfExists(pod.GetPod())
		if cleared := q.cleared.Add(1); milestone(cleared) {
			logger.Info("Cleared nominations not listed", "count", cleared)
		}
		return
	}
	q.SchedulingQueue.AddNominatedPod(logger, pod, nominatingInfo)
}
