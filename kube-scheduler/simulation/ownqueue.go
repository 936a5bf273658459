package simulation

// The scheduling queue: the build's copy of upstream's (package simulation/queue), with the same order and the same
// calls, whose heap and rejector plugins cost less per pod.
//
// On a saturated cluster every pod completion moves every waiting pod to the active queue (a heap push each), and
// every one is popped and fails again. Upstream's heap (v1.34 backend/heap) keeps the pods' keys in its array and
// looks both pods up by key in a map at every comparison (Less) and both again at every swap; its queue makes a new
// set, the union of the pod's unschedulable and pending plugins, for every pod it moves (isPodWorthRequeuing) and
// every pod it pops. package simulation/queue is upstream's backend/queue and backend/heap of v1.34.4, file for file,
// with only these changes, each marked "changed from upstream" in the code:
//   - the heap's array holds the items (object, index, key) instead of their keys: Less compares the same two
//     objects and Swap exchanges the same two entries, so container/heap makes the same moves on the same array
//     and every Pop returns the pod upstream's would;
//   - the rejector plugins are read from the pod's two sets instead of a new set made of their union: the same
//     plugins' hints called in the same order, the same metrics counted once per plugin (the union is still made
//     for the log line at -v=3, only when that level is on);
//   - when the profile's QueueSort plugin is the in-tree PrioritySort (the default), the active queue's heap keeps
//     each pod's rank beside it in its array, the two things PrioritySort.Less reads (the pod's priority and its
//     Timestamp), taken when the pod is pushed or updated, and compares those as PrioritySort.Less does, instead
//     of reaching them through four pointers per pod at each comparison. The same answers: a pod's priority cannot
//     change (an update goes through AddOrUpdate anyway, which takes the rank again), and the queue sets a pod's
//     Timestamp only when the pod is in none of its heaps (AddUnschedulableIfNotPresent, for a pod in flight);
//   - the metric children it counts in at every pod are kept once the metrics are registered (queue/metrics.go);
//   - a move lists the queueing hints that match its event once per profile instead of walking the hint map for
//     every pod (isPodWorthRequeuingListed: one of the orders upstream's map walk draws, and the answer does not
//     depend on the order);
//   - it counts its active, backoff and in-flight pods without listing them, for the idle reporter (idle.go).
//
// Its types are upstream's (SchedulingQueue, PreEnqueueCheck, the queueing hint maps are aliases), and it is made
// with the options scheduler.New gave upstream's queue, read from that queue (still empty: no informer has run)
// through reflection: its clock, queueing hints, PreEnqueue plugins, metrics recorder, metrics sample percent and API
// dispatcher. It then takes upstream's queue's places: the Scheduler's SchedulingQueue and NextPod, and each
// profile's PodNominator and PodActivator. Not replaced: the cache debugger (SIGUSR2 dumps upstream's queue, which
// stays empty) and the asynchronous API calls' cache (feature gate SchedulerAsyncAPICalls, off by default in v1.34:
// with it on, or with a queue of another shape, upstream's queue is kept). --own-queue=false keeps upstream's.
//
// --check-queue runs upstream's queue beside it (checkedQueue, below): every call made to the queue is made to
// both, and every Pop must return the same pod with the same attempts from both.

import (
	"fmt"
	"reflect"
	"sync"
	"time"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	upstream "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/utils/clock"

	"clustersim/kube-scheduler/simulation/queue"
)

// unexported reads the field name of the struct *v points to, of type T, through reflection.
func unexported[T any](v any, name string) (T, error) {
	var zero T
	value := reflect.ValueOf(v)
	if value.Kind() != reflect.Pointer || value.Elem().Kind() != reflect.Struct {
		return zero, fmt.Errorf("%T is not a pointer to a struct", v)
	}
	field := value.Elem().FieldByName(name)
	if !field.IsValid() || field.Type() != reflect.TypeOf((*T)(nil)).Elem() {
		return zero, fmt.Errorf("%T has no field %s of type %T", v, name, zero)
	}
	return *(*T)(unsafe.Pointer(field.UnsafeAddr())), nil
}

// ownQueueOptions: the options scheduler.New gave upstream's queue, read from it.
func ownQueueOptions(made *upstream.PriorityQueue, factory informers.SharedInformerFactory) ([]queue.Option, error) {
	clk, err := unexported[clock.WithTicker](made, "clock")
	if err != nil {
		return nil, err
	}
	hints, err := unexported[upstream.QueueingHintMapPerProfile](made, "queueingHintMap")
	if err != nil {
		return nil, err
	}
	preEnqueue, err := unexported[map[string]map[string]framework.PreEnqueuePlugin](made, "preEnqueuePluginMap")
	if err != nil {
		return nil, err
	}
	recorder, err := unexported[metrics.MetricAsyncRecorder](made, "metricsRecorder")
	if err != nil {
		return nil, err
	}
	percent, err := unexported[int](made, "pluginMetricsSamplePercent")
	if err != nil {
		return nil, err
	}
	dispatcher, err := unexported[fwk.APIDispatcher](made, "apiDispatcher")
	if err != nil {
		return nil, err
	}
	if utilfeature.DefaultFeatureGate.Enabled(features.SchedulerAsyncAPICalls) { // as scheduler.New decides
		return nil, fmt.Errorf("the asynchronous API calls (SchedulerAsyncAPICalls) hold upstream's queue")
	}
	maxInUnschedulable, err := unexported[time.Duration](made, "podMaxInUnschedulablePodsDuration")
	if err != nil {
		return nil, err
	}
	return []queue.Option{
		queue.WithClock(clk),
		queue.WithPodInitialBackoffDuration(0), // as setup gives scheduler.New
		queue.WithPodMaxBackoffDuration(0),
		queue.WithPodLister(factory.Core().V1().Pods().Lister()), // as scheduler.New gives its queue
		queue.WithPodMaxInUnschedulablePodsDuration(maxInUnschedulable),
		queue.WithPreEnqueuePluginMap(preEnqueue),
		queue.WithQueueingHintMapPerProfile(hints),
		queue.WithPluginMetricsSamplePercent(percent),
		queue.WithMetricsRecorder(recorder),
		queue.WithAPIDispatcher(dispatcher), // a nil *APIDispatcher when the feature is off, as scheduler.New gives it
	}, nil
}

// attachOwnQueue puts the build's queue in upstream's places in sched, just made by scheduler.New with factory and
// the profiles of cfgProfiles (its first one's QueueSort orders the queue, as in scheduler.New); with check, it
// runs upstream's queue beside it (checkedQueue). Upstream's queue is kept, and logged, if its shape is not the
// expected one.
func attachOwnQueue(logger klog.Logger, sched *scheduler.Scheduler, factory informers.SharedInformerFactory,
	first string, check bool) {
	made, ok := sched.SchedulingQueue.(*upstream.PriorityQueue)
	if !ok {
		logger.Info("Upstream's scheduling queue kept", "reason", fmt.Sprintf("a queue of type %T", sched.SchedulingQueue))
		return
	}
	options, err := ownQueueOptions(made, factory)
	profile, found := sched.Profiles[first]
	if err == nil && !found {
		err = fmt.Errorf("no profile %q", first)
	}
	if err != nil {
		logger.Info("Upstream's scheduling queue kept", "reason", err.Error())
		return
	}
	sorts, err := unexported[[]framework.QueueSortPlugin](profile, "queueSortPlugins")
	prioritySort := false
	if err == nil && len(sorts) == 1 {
		_, prioritySort = sorts[0].(*queuesort.PrioritySort)
	}
	if prioritySort {
		options = append(options, queue.WithPrioritySort())
	}
	var q upstream.SchedulingQueue = queue.NewPriorityQueue(profile.QueueSortFunc(), factory, options...)
	if check {
		q = &checkedQueue{SchedulingQueue: q, upstream: made, popped: map[types.UID]*framework.QueuedPodInfo{}}
	}
	sched.SchedulingQueue = q
	sched.NextPod = q.Pop
	for _, framework := range sched.Profiles {
		framework.SetPodNominator(q)
		framework.SetPodActivator(q)
	}
	logger.Info("Scheduling queue: the build's own", "checkedAgainstUpstream", check, "ranksInHeap", prioritySort)
}

// checkedQueue is the build's queue (SchedulingQueue) with upstream's beside it: every call that changes a queue is
// made to both, in the same order, and every Pop takes a pod from both and stops the scheduler if they differ (pod
// or attempts). Reads (the nominated pods, the lists) are answered by the build's queue. Upstream's queue keeps its
// own QueuedPodInfo of each pod; when a pod comes back after an attempt, its copy takes the rejector plugins and
// the pod the failure handler gave the build's.
type checkedQueue struct {
	upstream.SchedulingQueue
	upstream *upstream.PriorityQueue
	mu       sync.Mutex
	popped   map[types.UID]*framework.QueuedPodInfo // upstream's QueuedPodInfo of each pod it popped, until it is back
	checked  int64
}

func (q *checkedQueue) fail(logger klog.Logger, format string, args ...any) {
	logger.Error(nil, "Scheduling queue check failed: "+fmt.Sprintf(format, args...))
	klog.FlushAndExit(klog.ExitFlushTimeout, 3)
}

func (q *checkedQueue) Pop(logger klog.Logger) (*framework.QueuedPodInfo, error) {
	own, err := q.SchedulingQueue.Pop(logger)
	if own == nil || err != nil {
		return own, err
	}
	if len(q.upstream.PodsInActiveQ())+len(q.upstream.PodsInBackoffQ()) == 0 {
		q.fail(logger, "pod %s popped, upstream's queue holds none", klog.KObj(own.Pod))
	}
	theirs, err := q.upstream.Pop(logger)
	if err != nil || theirs == nil {
		q.fail(logger, "pod %s popped, upstream's Pop: %v", klog.KObj(own.Pod), err)
	}
	if theirs.Pod.UID != own.Pod.UID || theirs.Attempts != own.Attempts {
		q.fail(logger, "pod %s popped (attempt %d), upstream's queue popped %s (attempt %d)", klog.KObj(own.Pod),
			own.Attempts, klog.KObj(theirs.Pod), theirs.Attempts)
	}
	q.mu.Lock()
	q.popped[own.Pod.UID] = theirs
	q.checked++
	checked := q.checked
	q.mu.Unlock()
	if milestone(checked) {
		logger.Info("Scheduling queue pops checked against upstream's", "count", checked)
	}
	return own, nil
}

func (q *checkedQueue) AddUnschedulableIfNotPresent(logger klog.Logger, pInfo *framework.QueuedPodInfo,
	podSchedulingCycle int64) error {
	q.mu.Lock()
	theirs := q.popped[pInfo.Pod.UID]
	delete(q.popped, pInfo.Pod.UID)
	q.mu.Unlock()
	if theirs == nil {
		q.fail(logger, "pod %s back in the queue, not popped from upstream's", klog.KObj(pInfo.Pod))
	}
	theirs.PodInfo = pInfo.PodInfo
	theirs.UnschedulablePlugins = pInfo.UnschedulablePlugins.Clone()
	theirs.PendingPlugins = pInfo.PendingPlugins.Clone()
	errTheirs := q.upstream.AddUnschedulableIfNotPresent(logger, theirs, q.upstream.SchedulingCycle())
	err := q.SchedulingQueue.AddUnschedulableIfNotPresent(logger, pInfo, podSchedulingCycle)
	if (err == nil) != (errTheirs == nil) {
		q.fail(logger, "pod %s back in the queue: %v, upstream's: %v", klog.KObj(pInfo.Pod), err, errTheirs)
	}
	return err
}

func (q *checkedQueue) Done(uid types.UID) {
	q.upstream.Done(uid)
	q.SchedulingQueue.Done(uid)
	q.mu.Lock()
	delete(q.popped, uid)
	q.mu.Unlock()
}

func (q *checkedQueue) Add(logger klog.Logger, pod *v1.Pod) {
	q.upstream.Add(logger, pod)
	q.SchedulingQueue.Add(logger, pod)
}

func (q *checkedQueue) Activate(logger klog.Logger, pods map[string]*v1.Pod) {
	q.upstream.Activate(logger, pods)
	q.SchedulingQueue.Activate(logger, pods)
}

func (q *checkedQueue) Update(logger klog.Logger, oldPod, newPod *v1.Pod) {
	q.upstream.Update(logger, oldPod, newPod)
	q.SchedulingQueue.Update(logger, oldPod, newPod)
}

func (q *checkedQueue) Delete(pod *v1.Pod) {
	q.upstream.Delete(pod)
	q.SchedulingQueue.Delete(pod)
}

// MoveAllToActiveOrBackoffQueue: preCheck is called once per pod (it may count what it lets through, as
// timeout.go's does), by the build's queue; upstream's reads its answers.
func (q *checkedQueue) MoveAllToActiveOrBackoffQueue(logger klog.Logger, event fwk.ClusterEvent, oldObj,
	newObj interface{}, preCheck upstream.PreEnqueueCheck) {
	if preCheck == nil {
		q.upstream.MoveAllToActiveOrBackoffQueue(logger, event, oldObj, newObj, nil)
		q.SchedulingQueue.MoveAllToActiveOrBackoffQueue(logger, event, oldObj, newObj, nil)
		return
	}
	answers := map[types.UID]bool{}
	q.SchedulingQueue.MoveAllToActiveOrBackoffQueue(logger, event, oldObj, newObj, func(pod *v1.Pod) bool {
		answer := preCheck(pod)
		answers[pod.UID] = answer
		return answer
	})
	q.upstream.MoveAllToActiveOrBackoffQueue(logger, event, oldObj, newObj, func(pod *v1.Pod) bool {
		answer, ok := answers[pod.UID]
		if !ok {
			q.fail(logger, "pod %s unschedulable in upstream's queue only", klog.KObj(pod))
		}
		return answer
	})
}

func (q *checkedQueue) AssignedPodAdded(logger klog.Logger, pod *v1.Pod) {
	q.upstream.AssignedPodAdded(logger, pod)
	q.SchedulingQueue.AssignedPodAdded(logger, pod)
}

func (q *checkedQueue) AssignedPodUpdated(logger klog.Logger, oldPod, newPod *v1.Pod, event fwk.ClusterEvent) {
	q.upstream.AssignedPodUpdated(logger, oldPod, newPod, event)
	q.SchedulingQueue.AssignedPodUpdated(logger, oldPod, newPod, event)
}

func (q *checkedQueue) AddNominatedPod(logger klog.Logger, pod fwk.PodInfo, nominatingInfo *framework.NominatingInfo) {
	q.upstream.AddNominatedPod(logger, pod, nominatingInfo)
	q.SchedulingQueue.AddNominatedPod(logger, pod, nominatingInfo)
}

func (q *checkedQueue) DeleteNominatedPodIfExists(pod *v1.Pod) {
	q.upstream.DeleteNominatedPodIfExists(pod)
	q.SchedulingQueue.DeleteNominatedPodIfExists(pod)
}

func (q *checkedQueue) UpdateNominatedPod(logger klog.Logger, oldPod *v1.Pod, newPodInfo fwk.PodInfo) {
	q.upstream.UpdateNominatedPod(logger, oldPod, newPodInfo)
	q.SchedulingQueue.UpdateNominatedPod(logger, oldPod, newPodInfo)
}

func (q *checkedQueue) Run(logger klog.Logger) {
	q.upstream.Run(logger)
	q.SchedulingQueue.Run(logger)
}

func (q *checkedQueue) Close() {
	q.upstream.Close()
	q.SchedulingQueue.Close()
}
