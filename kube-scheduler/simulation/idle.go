package simulation

// Instants: the simulation build takes each simulated instant whole, and says when it is done with it.
//
// End of an instant: simulated time must move on exactly when the scheduler has finished with an instant, never
// in the middle of a pass over the pending pods (the next instant's events would meet a queue whose order
// depends on how far the pass got). The scheduler is idle at pod resourceVersion R when its pod event handlers
// have handled every pod event up to R and its queue has no pod to schedule nor in flight (scheduling or
// binding). It then POSTs {"resourceVersion": "R"} to /clustersim/v1/idle.
//
// Start of an instant: the facade publishes an instant's pods (new ones, finished ones) as several watch events;
// the scheduler must not start scheduling after the first of them and before the last (what it would do then
// would depend on thread timing). When a pod handler has handled a new pod or a pod's end beyond what the
// scheduler knows was published, NextPod asks GET /clustersim/v1/idle for the resourceVersion of the last pod
// event published, and schedules only once every pod handler has handled it, and only while the active queue
// has pods (so that the queue's own Pop never wakes up half-way through an instant).
//
// A server that does not know that path (404) is not the facade: the build then behaves as upstream.

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"math/rand"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	coreinformers "k8s.io/client-go/informers/core"
	corev1informers "k8s.io/client-go/informers/core/v1"
	clientset "k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	fwkapi "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

const idlePath = "/clustersim/v1/idle"

// idleReporter follows the scheduler's pod event handlers and its queue, and reports idleness.
type idleReporter struct {
	client  clientset.Interface
	pods    cache.SharedIndexInformer
	mu      sync.Mutex
	handled []*atomic.Int64 // per pod handler registration: resourceVersion of the last pod event it handled
	regs    []cache.ResourceEventHandlerRegistration
	floor   int64 // the pods' list resourceVersion, once every handler has handled the initial list
	queue   queue.SchedulingQueue
	assumed func(*v1.Pod) (bool, error) // the scheduler cache's IsAssumedPod
	binding map[types.UID]bool          // pods whose binding cycle is on (Done is called before the binding)
	poke    chan struct{}
	ready   chan struct{} // poked by the pod handlers: NextPod's wait
	cycle   sync.Mutex    // held by a scheduling cycle, from NextPod's return to the next NextPod; pod handlers wait
	inCycle bool          // the scheduling goroutine holds cycle (only that goroutine reads or writes it)
	stop    chan struct{} // closed when the scheduler stops
	off     atomic.Bool
	seen    atomic.Int64             // resourceVersion of the last new pod or pod end a pod handler began to handle
	known   int64                    // resourceVersion of the last pod event the facade had published when last asked
	now     float64                  // the simulated time of that instant
	active  int                      // pods in the active queue when NextPod last counted them, less those popped since
	recount atomic.Bool              // set by the pod handlers: they may have taken pods out of the active queue
	written atomic.Int64             // resourceVersion of the scheduler's last pod status write (its echo is waited for)
	current *framework.QueuedPodInfo // the pod of the current scheduling cycle
	order   *bindOrder
	widen   time.Duration         // --widen-races
	source  *cycleSource          // the scheduling cycle's private source (ties.go), reused
	timeout *unschedulableTimeout // podMaxInUnschedulablePodsDuration in simulated time (timeout.go); nil: upstream's
	untimed bool                  // the facade gave no simulated time (said once)
}

func newIdleReporter(client clientset.Interface, widen time.Duration) *idleReporter {
	return &idleReporter{client: client, poke: make(chan struct{}, 1), ready: make(chan struct{}, 1),
		stop: make(chan struct{}), order: newBindOrder(), widen: widen, source: newCycleSource()}
}

// factory wraps the informer factory given to scheduler.New: the pod informer's handlers are counted.
func (r *idleReporter) factory(f informers.SharedInformerFactory) informers.SharedInformerFactory {
	return countingFactory{f, r}
}

type countingFactory struct {
	informers.SharedInformerFactory
	r *idleReporter
}

func (f countingFactory) Core() coreinformers.Interface {
	return countingCore{f.SharedInformerFactory.Core(), f.r}
}

type countingCore struct {
	coreinformers.Interface
	r *idleReporter
}

func (c countingCore) V1() corev1informers.Interface { return countingV1{c.Interface.V1(), c.r} }

type countingV1 struct {
	corev1informers.Interface
	r *idleReporter
}

func (v countingV1) Pods() corev1informers.PodInformer { return countingPods{v.Interface.Pods(), v.r} }

type countingPods struct {
	corev1informers.PodInformer
	r *idleReporter
}

func (p countingPods) Informer() cache.SharedIndexInformer {
	informer := p.PodInformer.Informer()
	p.r.mu.Lock()
	p.r.pods = informer
	p.r.mu.Unlock()
	return countingInformer{informer, p.r}
}

type countingInformer struct {
	cache.SharedIndexInformer
	r *idleReporter
}

func (i countingInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	handled := &atomic.Int64{}
	reg, err := i.SharedIndexInformer.AddEventHandler(countingHandler{h, handled, i.r})
	if err == nil {
		i.r.mu.Lock()
		i.r.handled = append(i.r.handled, handled)
		i.r.regs = append(i.r.regs, reg)
		i.r.mu.Unlock()
	}
	return reg, err
}

// countingHandler records the resourceVersion of each pod event once the scheduler's handler has handled it.
type countingHandler struct {
	cache.ResourceEventHandler
	handled *atomic.Int64
	r       *idleReporter
}

// The scheduler's pod handlers run between scheduling cycles, never during one (see attach). A new pod or a pod's
// end (an instant's events, not the echo of the scheduler's own writes) is marked seen before its handler runs:
// a cycle that starts after the handler changed the queue then knows an instant has begun (see NextPod).

func (h countingHandler) OnAdd(obj interface{}, initial bool) {
	h.r.saw(obj)
	h.r.cycle.Lock()
	h.ResourceEventHandler.OnAdd(obj, initial)
	h.r.recount.Store(true) // before the unlock: NextPod, holding the lock, sees every pod handler that ran
	h.r.cycle.Unlock()
	h.r.widenRaces()
	h.done(obj)
}

func (h countingHandler) OnUpdate(old, obj interface{}) {
	h.r.cycle.Lock()
	h.ResourceEventHandler.OnUpdate(old, obj)
	h.r.recount.Store(true) // before the unlock: NextPod, holding the lock, sees every pod handler that ran
	h.r.cycle.Unlock()
	h.r.widenRaces()
	h.done(obj)
}

func (h countingHandler) OnDelete(obj interface{}) {
	pod := obj
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		pod = tombstone.Obj
	}
	h.r.saw(pod)
	h.r.cycle.Lock()
	h.ResourceEventHandler.OnDelete(obj)
	h.r.recount.Store(true) // before the unlock: NextPod, holding the lock, sees every pod handler that ran
	h.r.cycle.Unlock()
	h.r.widenRaces()
	h.done(pod)
}

// saw records an instant's pod event as seen, before its handler runs. (Recorded after the handler, as it was, a
// cycle could start between the handler's unlock and the record: after the first completion of an instant had
// sent the waiting pods back to the active queue, before the instant's other completions were handled, so they
// were tried against part of the room freed at that instant, by thread timing.)
func (r *idleReporter) saw(obj interface{}) {
	if pod, ok := obj.(*v1.Pod); ok {
		rv, _ := strconv.ParseInt(pod.ResourceVersion, 10, 64)
		r.mu.Lock()
		r.seen.Store(max(r.seen.Load(), rv))
		r.mu.Unlock()
	}
}

// done records the event's resourceVersion as handled, then wakes the reporter and NextPod.
func (h countingHandler) done(obj interface{}) {
	if pod, ok := obj.(*v1.Pod); ok {
		rv, _ := strconv.ParseInt(pod.ResourceVersion, 10, 64)
		if rv > h.handled.Load() {
			h.handled.Store(rv)
		}
	}
	h.r.wake()
	select {
	case h.r.ready <- struct{}{}:
	default:
	}
}

// countingQueue is the scheduler's queue; Done (a pod's scheduling or binding is over) wakes the reporter.
type countingQueue struct {
	queue.SchedulingQueue
	r *idleReporter
}

// The binding is recorded before the queue's Done: between the two, the reporter saw no pod in flight nor binding,
// and could report idle before the binding was posted (time then moved on without it).
func (q countingQueue) Done(uid types.UID) {
	r := q.r
	if assumed, err := r.assumed(&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}}); err == nil && assumed {
		r.mu.Lock() // the binding cycle calls Done before binding: the pod is busy until no longer assumed
		r.binding[uid] = true
		r.mu.Unlock()
	}
	q.SchedulingQueue.Done(uid)
	r.widenRaces()
	r.wake()
}

// widenRaces (--widen-races, for tests) wakes the scheduling goroutine and the reporter and waits, at the points
// where the build's records follow what the scheduler's goroutines did (a pod handler's effect, the queue's Done):
// any order of those goroutines the records do not account for then shows as a changed schedule.
func (r *idleReporter) widenRaces() {
	if r.widen <= 0 {
		return
	}
	r.wake()
	select {
	case r.ready <- struct{}{}:
	default:
	}
	time.Sleep(r.widen)
}

// attach follows the scheduler made with the wrapped factory: its queue, and NextPod (entered when the previous
// pod's scheduling cycle is over).
//
// A scheduling cycle (from NextPod's return to the next call, failure handling included) holds r.cycle, and the
// pod handlers take it: a pod event is handled between two cycles, never during one. The queue draws from
// math/rand's global source for every pod it activates (runPreEnqueuePlugins, on the handlers' goroutines), and
// kube-scheduler breaks score ties from the same source (selectHost): a handler drawing in the middle of a cycle
// would shift that cycle's draws by thread timing.
func (r *idleReporter) attach(sched *scheduler.Scheduler) {
	r.queue = sched.SchedulingQueue
	r.assumed = sched.Cache.IsAssumedPod
	sched.Cache = orderCache{sched.Cache, r.order}
	r.binding = map[types.UID]bool{}
	sched.SchedulingQueue = countingQueue{sched.SchedulingQueue, r}
	next := sched.NextPod
	sched.NextPod = func(logger klog.Logger) (*framework.QueuedPodInfo, error) {
		// Not the previous cycle's source (ties.go): a cycle answered from failures.go draws none.
		cycleRand.Store(nil)
		if r.inCycle { // the previous cycle is over
			r.inCycle = false
			r.cycle.Unlock()
		}
		// The reporter is woken when the pass may be over. While the active queue is known to hold pods (counted,
		// and no pod handler ran since), it is not idle, and waking it at every pod cost the scheduling goroutine
		// a thread wake-up per attempt; the last pod's NextPod, a handler or the queue's Done wakes it.
		if r.active <= 0 || r.recount.Load() {
			r.wake()
		}
		for !r.off.Load() {
			if !r.instantReady(logger) {
				return nil, nil // the scheduler is stopping
			}
			// The cycle starts before the Pop: a pod event handled between the Pop and the cycle would meet the
			// popped pod in flight (the queue then keeps the event for that pod's requeue), or not, by timing.
			r.cycle.Lock()
			// No pod handler ran since the active queue was counted (Pop has a pod), and none began an instant
			// since instantReady looked (its checks are not atomic with the handlers; under the lock, no handler
			// runs, and one that changed the queue for a new instant marked it seen before).
			if !r.recount.Load() && r.seen.Load() <= r.known {
				r.inCycle = true
				break
			}
			r.cycle.Unlock()
		}
		pInfo, err := next(logger)
		if pInfo == nil || pInfo.Pod == nil {
			if r.inCycle {
				r.inCycle = false
				r.cycle.Unlock()
			}
			return pInfo, err
		}
		if !r.inCycle { // not the facade: as upstream, the Pop may wait for pod events
			r.cycle.Lock()
			r.inCycle = true
		}
		r.current = pInfo
		return pInfo, err
	}
	schedule := sched.SchedulePod
	sched.SchedulePod = func(ctx context.Context, fwk framework.Framework, state fwkapi.CycleState, pod *v1.Pod) (
		scheduler.ScheduleResult, error) {
		if r.current != nil {
			seed := tieSeed(r.current)
			rand.Seed(seed) //nolint:staticcheck // see main.go
			// ScheduleOne drew once between the Pop and here (the cycle's metrics sample): the same draws as when
			// the seed was set at the Pop, and no seeding for an attempt answered from failures.go.
			rand.Intn(100) //nolint:gosec // a draw, not a secret
			// The cycle's own draws (ties.go), from the same point of the same sequence, seeded at the first.
			source := r.source
			source.reset(seed)
			cycleRand.Store(source)
			if len(sched.Extenders) == 0 && fwk.HasScorePlugins() {
				fwk = tieFramework{fwk, source}
			}
		}
		return schedule(ctx, fwk, state, pod)
	}
}

// tieSeed is the seed of one scheduling cycle's draws, from the pod and its attempt: kube-scheduler breaks score
// ties with math/rand (selectHost), and other goroutines also draw from its global source (the queue, for each
// pod it moves; the reflectors, at each watch), so one seed for the whole run would give each cycle draws that
// depend on thread timing; the cycle draws from a source of its own, seeded with it (ties.go). The pod is named
// by namespace and name, not uid: an API server numbers uids across kinds, so a pod's uid depends on how many
// events the scheduler had posted (asynchronously) before the pod was created.
func tieSeed(pInfo *framework.QueuedPodInfo) int64 {
	hash := fnv.New64a()
	hash.Write([]byte(pInfo.Pod.Namespace + "/" + pInfo.Pod.Name + "/"))
	hash.Write([]byte(strconv.Itoa(pInfo.Attempts)))
	return int64(hash.Sum64())
}

// instantReady waits until the current instant is fully handled and the active queue has a pod; false when the
// scheduler stops.
func (r *idleReporter) instantReady(logger klog.Logger) bool {
	for !r.off.Load() {
		if seen := r.seen.Load(); seen > r.known {
			ctx := klog.NewContext(context.Background(), logger) // here only: NextPod comes here at every Pop
			var answer struct {
				ResourceVersion string `json:"resourceVersion"`
				Time            string `json:"time"` // the instant's simulated time, in seconds
			}
			data, err := r.client.CoreV1().RESTClient().Get().AbsPath(idlePath).DoRaw(ctx)
			if apierrors.IsNotFound(err) {
				r.off.Store(true)
				break
			}
			if err != nil || json.Unmarshal(data, &answer) != nil {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			published, _ := strconv.ParseInt(answer.ResourceVersion, 10, 64)
			r.known = max(published, seen)
			r.learnTime(logger, answer.Time)
		}
		if r.handledAll() >= max(r.known, r.written.Load()) {
			// The instant is handled and its pass not begun: the pods unschedulable for too long go back first.
			if r.timeout != nil && !r.untimed && r.timeout.instant(logger, r.queue, r.now) {
				r.recount.Store(true)
			}
			if r.activeQueued() {
				return true
			}
		}
		select {
		case <-r.ready:
		case <-r.stop:
			return false
		case <-time.After(100 * time.Millisecond): // a safety net
		}
	}
	return true
}

// learnTime reads the simulated time of the instant published (GET /clustersim/v1/idle's "time"). A facade that
// does not give it leaves podMaxInUnschedulablePodsDuration unapplied (said once).
func (r *idleReporter) learnTime(logger klog.Logger, answer string) {
	if r.timeout == nil {
		return
	}
	now, err := strconv.ParseFloat(answer, 64)
	if err != nil {
		if !r.untimed {
			r.untimed = true
			logger.Info("The API server gives no simulated time: podMaxInUnschedulablePodsDuration is not applied")
		}
		return
	}
	r.now = max(r.now, now)
}

// activeQueued: the active queue has a pod for the Pop that follows. Counting the queue copies it
// (PodsInActiveQ), so NextPod counts once and then counts down its own Pops; it counts again when the count
// reaches 0 (a failure may have put pods back) or after a pod handler ran (it may have removed some).
func (r *idleReporter) activeQueued() bool {
	if r.recount.Swap(false) || r.active <= 0 {
		r.active = activeLen(r.queue)
	}
	if r.active == 0 {
		return false
	}
	r.active--
	return true
}

// handledAll is the resourceVersion every pod handler has handled.
func (r *idleReporter) handledAll() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.handled) == 0 {
		return 0
	}
	rv := r.handled[0].Load()
	for _, h := range r.handled[1:] {
		rv = min(rv, h.Load())
	}
	return max(rv, r.floor)
}

func (r *idleReporter) wake() {
	if r.off.Load() {
		return
	}
	select {
	case r.poke <- struct{}{}:
	default:
	}
}

// run reports each new idle resourceVersion until ctx ends.
func (r *idleReporter) run(ctx context.Context) {
	defer close(r.stop)
	logger := klog.FromContext(ctx)
	var reported int64 = -1
	for !r.off.Load() {
		select {
		case <-ctx.Done():
			return
		case <-r.poke:
		case <-time.After(time.Second): // a safety net: an idle state reached without a poke
		}
		rv, ok := r.idle()
		if !ok || rv == reported {
			continue
		}
		body, _ := json.Marshal(map[string]string{"resourceVersion": strconv.FormatInt(rv, 10)})
		err := r.client.CoreV1().RESTClient().Post().AbsPath(idlePath).Body(body).
			SetHeader("Content-Type", "application/json").Do(ctx).Error()
		switch {
		case err == nil:
			reported = rv
		case apierrors.IsNotFound(err):
			logger.Info("The API server does not take idle reports (not clustersim's facade): not sending them")
			r.off.Store(true)
		case ctx.Err() == nil:
			logger.V(2).Info("Idle report failed", "err", err)
		}
	}
}

// idle: the pod resourceVersion every pod handler has handled, and whether nothing is left to schedule after it.
func (r *idleReporter) idle() (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.queue == nil || len(r.handled) == 0 {
		return 0, false
	}
	if r.floor == 0 {
		for _, reg := range r.regs {
			if !reg.HasSynced() {
				return 0, false
			}
		}
		r.floor, _ = strconv.ParseInt(r.pods.LastSyncResourceVersion(), 10, 64)
	}
	rv := r.handled[0].Load()
	for _, h := range r.handled[1:] {
		rv = min(rv, h.Load())
	}
	rv = max(rv, r.floor)
	for uid := range r.binding { // bound (and seen bound by the informer) or given up: no longer assumed
		if assumed, err := r.assumed(&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}}); err == nil && assumed {
			return 0, false
		}
		delete(r.binding, uid)
	}
	// Not during a scheduling cycle: a failed pod leaves the queue's in-flight pods (Done) before the failure
	// handler writes its PodScheduled=False status, and that write must reach the facade before the report.
	if !r.cycle.TryLock() {
		return 0, false
	}
	defer r.cycle.Unlock()
	// Read after rv: the effects of every event up to rv are in the queue now.
	// In flight first (cheap, and non-empty during a pass), then the queues; then in flight again, for a pod that
	// moved from the active queue to in flight between the reads.
	q := r.queue
	if inFlightLen(q) > 0 || activeLen(q) > 0 || backoffLen(q) > 0 || inFlightLen(q) > 0 {
		return 0, false
	}
	return rv, true
}

// writes wraps the scheduler's clientset: a pod status write (the failure handler's PodScheduled=False patch)
// records the resourceVersion it made, and the next scheduling cycle waits until the pod handlers have handled it.
// The queue acts on that echo (NodeResourcesFit's queueing hint for an update of the pod itself sends the pod back
// to the active queue): handled at whatever point of the pass it arrived, it put the pod back at a point that
// depended on thread timing, and with it the pod's place in the queue's order from then on.
func (r *idleReporter) writes(c clientset.Interface) clientset.Interface { return writeClient{c, r} }

type writeClient struct {
	clientset.Interface
	r *idleReporter
}

func (c writeClient) CoreV1() typedcorev1.CoreV1Interface {
	return writeCore{c.Interface.CoreV1(), c.r}
}

type writeCore struct {
	typedcorev1.CoreV1Interface
	r *idleReporter
}

func (c writeCore) Pods(namespace string) typedcorev1.PodInterface {
	return writePods{c.CoreV1Interface.Pods(namespace), c.r}
}

type writePods struct {
	typedcorev1.PodInterface
	r *idleReporter
}

func (p writePods) Patch(ctx context.Context, name string, pt types.PatchType, data []byte,
	opts metav1.PatchOptions, subresources ...string) (*v1.Pod, error) {
	pod, err := p.PodInterface.Patch(ctx, name, pt, data, opts, subresources...)
	if err == nil && pod != nil {
		rv, _ := strconv.ParseInt(pod.ResourceVersion, 10, 64)
		for written := p.r.written.Load(); rv > written && !p.r.written.CompareAndSwap(written, rv); {
			written = p.r.written.Load()
		}
	}
	return pod, err
}

// Bind posts the binding once every pod assumed before this one is bound or forgotten: the scheduler binds in
// goroutines, and the facade starts pods in the order their bindings come, which orders the records of pods that
// start and end at the same instants.
func (p writePods) Bind(ctx context.Context, binding *v1.Binding, opts metav1.CreateOptions) error {
	p.r.order.wait(binding.UID)
	defer p.r.order.done(binding.UID)
	return p.PodInterface.Bind(ctx, binding, opts)
}

// bindOrder is the order in which the scheduling cycles assumed pods, less the pods bound or forgotten since.
type bindOrder struct {
	mu      sync.Mutex
	changed *sync.Cond
	uids    []types.UID
}

func newBindOrder() *bindOrder {
	o := &bindOrder{}
	o.changed = sync.NewCond(&o.mu)
	return o
}

func (o *bindOrder) assumed(uid types.UID) {
	o.mu.Lock()
	o.uids = append(o.uids, uid)
	o.mu.Unlock()
}

// wait returns when uid is the first pod assumed and not yet bound or forgotten (or is not one of them).
func (o *bindOrder) wait(uid types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.uids) > 0 && o.uids[0] != uid && slices.Contains(o.uids, uid) {
		o.changed.Wait()
	}
}

func (o *bindOrder) done(uid types.UID) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if i := slices.Index(o.uids, uid); i >= 0 {
		o.uids = slices.Delete(o.uids, i, i+1)
		o.changed.Broadcast()
	}
}

// orderCache is the scheduler cache; it tells bindOrder which pods are assumed, bound and forgotten.
type orderCache struct {
	internalcache.Cache
	order *bindOrder
}

func (c orderCache) AssumePod(logger klog.Logger, pod *v1.Pod) error {
	err := c.Cache.AssumePod(logger, pod)
	if err == nil {
		c.order.assumed(pod.UID)
	}
	return err
}

func (c orderCache) FinishBinding(logger klog.Logger, pod *v1.Pod) error {
	defer c.order.done(pod.UID) // a binder plugin of its own may bind without Bind above
	return c.Cache.FinishBinding(logger, pod)
}

func (c orderCache) ForgetPod(logger klog.Logger, pod *v1.Pod) error {
	defer c.order.done(pod.UID)
	return c.Cache.ForgetPod(logger, pod)
}

// queueLengths: a queue that counts its pods without listing them (the build's, simulation/queue).
type queueLengths interface {
	ActiveLen() int
	BackoffLen() int
	InFlightLen() int
}

// activeLen, backoffLen, inFlightLen: len(q.PodsInActiveQ()), len(q.PodsInBackoffQ()), len(q.InFlightPods()),
// without the lists when q can count.
func activeLen(q queue.SchedulingQueue) int {
	if counting, ok := q.(queueLengths); ok {
		return counting.ActiveLen()
	}
	return len(q.PodsInActiveQ())
}

func backoffLen(q queue.SchedulingQueue) int {
	if counting, ok := q.(queueLengths); ok {
		return counting.BackoffLen()
	}
	return len(q.PodsInBackoffQ())
}

func inFlightLen(q queue.SchedulingQueue) int {
	if counting, ok := q.(queueLengths); ok {
		return counting.InFlightLen()
	}
	return len(q.InFlightPods())
}
