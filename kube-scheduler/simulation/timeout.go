package simulation

// podMaxInUnschedulablePodsDuration in simulated time.
//
// Upstream's queue sends a pod back to the active (or backoff) queue when it has stayed in the unschedulable
// pods for longer than podMaxInUnschedulablePodsDuration (5 min by default), measured from the queue's Timestamp
// of the pod (set when the pod is added and each time it is put back after a failure), checked every 30 s of
// wall time on a goroutine of the queue's own (flushUnschedulablePodsLeftover). In a simulation wall time is not
// simulated time, and that goroutine moves pods at moments no lock of the build orders.
//
// The simulation build keeps the same rule in simulated time: the queue is made with a duration no run reaches
// (its goroutine never moves a pod), the build stamps each pod with the instant's simulated time where upstream
// sets Timestamp, and at the start of each instant (once the pod handlers have handled its events, before its
// pass) it moves the pods whose stamp is older than the configured duration with the queue's own
// MoveAllToActiveOrBackoffQueue and upstream's event (UnschedulableTimeout): the same moves, the same queueing
// strategy, at an instant every run agrees on. The facade gives the instant's time with the resourceVersion it
// publishes (GET /clustersim/v1/idle).

import (
	"math"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// neverInWallTime is the podMaxInUnschedulablePodsDuration the queue itself gets when the build applies the
// configured one in simulated time: no run lasts that long (time.Duration's largest value, 292 years).
const neverInWallTime = time.Duration(math.MaxInt64)

// unschedulableTimeout applies podMaxInUnschedulablePodsDuration in simulated time.
type unschedulableTimeout struct {
	limit float64 // podMaxInUnschedulablePodsDuration, in seconds
	mu    sync.Mutex
	now   float64               // simulated time of the current instant (GET /clustersim/v1/idle)
	known bool                  // now was given by the facade at least once
	since map[types.UID]float64 // each queued pod's stamp: the simulated time upstream's Timestamp stands for
	fresh []types.UID           // pods added since the last instant's time was learned: stamped with it
	moved int64                 // pods moved so far (logged at milestones)
}

func newUnschedulableTimeout(limit time.Duration) *unschedulableTimeout {
	return &unschedulableTimeout{limit: limit.Seconds(), since: map[types.UID]float64{}}
}

// added: the queue made a QueuedPodInfo for a new pod (its Timestamp is now). The pod event is handled before
// the build learns the instant's time (NextPod asks for it once the handlers are done), so the stamp is the next
// time learned: the instant of that event.
func (t *unschedulableTimeout) added(uid types.UID) {
	t.mu.Lock()
	t.fresh = append(t.fresh, uid)
	t.mu.Unlock()
}

// failed: the pod is put back after a failed attempt (AddUnschedulableIfNotPresent refreshes its Timestamp).
func (t *unschedulableTimeout) failed(uid types.UID) {
	t.mu.Lock()
	t.since[uid] = t.now
	t.mu.Unlock()
}

// deleted: the pod left the queue for good (deleted, or bound: the informer's unscheduled pods lose it).
func (t *unschedulableTimeout) deleted(uid types.UID) {
	t.mu.Lock()
	delete(t.since, uid)
	t.mu.Unlock()
}

// instant: the facade's instant at simulated time now is handled (every pod handler has handled its events) and
// its pass has not begun. Moves the pods unschedulable for longer than the limit, as flushUnschedulablePodsLeftover
// does; true when it moved some (the active queue may have grown).
func (t *unschedulableTimeout) instant(logger klog.Logger, q queue.SchedulingQueue, now float64) bool {
	t.mu.Lock()
	if t.known && now <= t.now && len(t.fresh) == 0 {
		t.mu.Unlock()
		return false
	}
	t.now, t.known = max(t.now, now), true
	for _, uid := range t.fresh {
		t.since[uid] = t.now
	}
	t.fresh = t.fresh[:0]
	due := map[types.UID]struct{}{}
	for uid, since := range t.since {
		if t.now-since > t.limit {
			due[uid] = struct{}{}
		}
	}
	t.mu.Unlock()
	if len(due) == 0 {
		return false
	}
	moved := 0
	// preCheck runs under the queue's lock, for the pods in the unschedulable pods only (a due pod an event has
	// already sent back to the active queue is not one of them, as in upstream's flush).
	q.MoveAllToActiveOrBackoffQueue(logger, framework.EventUnschedulableTimeout, nil, nil, func(pod *v1.Pod) bool {
		_, ok := due[pod.UID]
		if ok {
			moved++
		}
		return ok
	})
	if moved == 0 {
		return false
	}
	t.mu.Lock()
	t.moved += int64(moved)
	total := t.moved
	t.mu.Unlock()
	logger.V(2).Info("Pods unschedulable for longer than podMaxInUnschedulablePodsDuration (simulated time) moved",
		"time", now, "pods", moved, "total", total)
	if milestone(total) {
		logger.Info("Pods moved after podMaxInUnschedulablePodsDuration of simulated time", "count", total)
	}
	return true
}

// The queue's methods that set or end a pod's Timestamp, followed (countingQueue, idle.go).

func (q countingQueue) Add(logger klog.Logger, pod *v1.Pod) {
	if t := q.r.timeout; t != nil {
		t.added(pod.UID)
	}
	q.SchedulingQueue.Add(logger, pod)
}

func (q countingQueue) AddUnschedulableIfNotPresent(logger klog.Logger, pInfo *framework.QueuedPodInfo,
	podSchedulingCycle int64) error {
	err := q.SchedulingQueue.AddUnschedulableIfNotPresent(logger, pInfo, podSchedulingCycle)
	if t := q.r.timeout; t != nil && err == nil { // upstream refreshes Timestamp unless it returns an error
		t.failed(pInfo.Pod.UID)
	}
	return err
}

func (q countingQueue) Delete(pod *v1.Pod) {
	q.SchedulingQueue.Delete(pod)
	if t := q.r.timeout; t != nil {
		t.deleted(pod.UID)
	}
}
