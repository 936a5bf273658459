package simulation

// Failures: the simulation build answers a scheduling attempt that it has already answered, with the same answer.
//
// On a saturated cluster every pod completion sends every waiting pod back through the filters (NodeResourcesFit's
// queueing hint answers Queue for any deleted assigned pod), and nearly all of those attempts fail again, each
// running every Filter plugin on every node and then DefaultPreemption's dry run. A failed attempt is a function
// of the pod's scheduling content and of the cluster state the scheduler sees; when both are those of an attempt
// that failed before, the build gives that attempt's FitError and PostFilter answer again without running the
// plugins. Everything else in the cycle runs as upstream: the queue's Pop, the failure handler (the pod's
// unschedulable plugins, which drive the queueing hints, come from the same Diagnosis; the same event and status
// message), the requeue.
//
// The cluster state is a generation: it moves before and after every change of the scheduler cache (nodes,
// assigned and assumed pods: what the snapshot is made of) and every cluster event the queue is given (which is
// how the scheduler hears of volumes, storage and DRA objects). An answer is kept only if the generation did not
// move during its attempt, and given again only at that same generation.
//
// The pod's scheduling content (key) is the pod without what no PreFilter, Filter or PostFilter plugin of the
// profile reads: its name, uid, annotations, resourceVersion, timestamps and status conditions (written by the
// scheduler itself); its namespace's labels are added (InterPodAffinity matches existing pods' namespaceSelector
// against them).
//
// It is used only where that is a complete account of what an attempt reads:
//   - profiles whose PreFilter, Filter and PostFilter plugins are all in-tree plugins read for this (readPlugins),
//     with no extender and no DoNotSchedule default topology spread constraint (read from Services and
//     ReplicaSets, which are not cluster events);
//   - pods with no volume and no resource claim (those read PersistentVolumeClaims, PersistentVolumes, CSI and
//     DRA objects through listers), no affinity term with a namespaceSelector (it lists all namespaces), no
//     nominated node;
//   - attempts that failed in Filter or PreFilter over all nodes (findNodesThatFitPod then leaves
//     nextStartNodeIndex where it was) and whose PostFilter nominated nothing (no preemption: it has no effect);
//   - while no pod has ever been nominated (nominated pods count in other pods' filters): the first nomination
//     (a preemption, or a pod seen with status.nominatedNodeName) turns the cache off for the rest of the run.

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	kubeschedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// readPlugins: the in-tree plugins whose PreFilter, Filter and PostFilter read only the pod's key, the snapshot,
// the nominated pods and the objects excluded above (v1.34 sources, pkg/scheduler/framework/plugins).
var readPlugins = sets.New("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
	"NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
	"PodTopologySpread", "InterPodAffinity", "DynamicResources", "DefaultPreemption")

// failures is the cache of failed attempts. Its fields other than gen and off are used by the scheduling
// goroutine only (SchedulePod and PostFilter are called from the scheduling cycle).
type failures struct {
	gen        atomic.Int64 // the cluster state: moves before and after every change
	off        atomic.Bool  // a pod was nominated: no longer used
	profiles   sets.Set[string]
	namespaces corelisters.NamespaceLister
	schedule   func(context.Context, framework.Framework, fwk.CycleState, *v1.Pod) (scheduler.ScheduleResult, error)
	answers    map[string]*answer
	contents   map[types.UID]content // each pod's marshalled scheduling content, at a resourceVersion
	attempt    *attempt              // the current scheduling cycle's, if it may be kept or is answered from the cache
	hits       atomic.Int64
	given      atomic.Pointer[givenError] // the last FitError given from the cache (read by the failure handler)
}

// givenError is a FitError given from the cache, and the answer it was made from.
type givenError struct {
	err    *framework.FitError
	answer *answer
}

type answer struct {
	gen         int64
	numAllNodes int
	diagnosis   framework.Diagnosis // as SchedulePod returned it (no PostFilterMsg)
	reasons     *string             // the reasons part of its message, once made
	result      *framework.PostFilterResult
	status      *fwk.Status
	message     *keptMessage // FitError.Error() of a FitError given from it, once made
}

// keptMessage is the message of a FitError made from an answer, for the PostFilter message and node count it had.
type keptMessage struct {
	postFilter string
	nodes      int
	text       string
}

// content is a pod's scheduling content as marshalled at one resourceVersion: the API server gives every change of
// a pod a new resourceVersion, so the same uid and resourceVersion are the same content.
type content struct {
	resourceVersion string
	data            string
	key             string // the key made from it, for profile and namespace (its resourceVersion), if made
	profile         string
	namespace       string
}

type attempt struct {
	key    string
	gen    int64
	answer *answer
	hit    bool
}

// attachFailures puts the cache of failed attempts in sched, for the profiles it can serve.
func attachFailures(sched *scheduler.Scheduler, profiles []kubeschedulerconfig.KubeSchedulerProfile,
	namespaces corelisters.NamespaceLister, extenders int) *failures {
	f := &failures{profiles: sets.New[string](), namespaces: namespaces, answers: map[string]*answer{},
		contents: map[types.UID]content{}}
	for _, profile := range profiles {
		if extenders == 0 && profileRead(profile, sched.Profiles[profile.SchedulerName]) {
			f.profiles.Insert(profile.SchedulerName)
		}
	}
	f.schedule = sched.SchedulePod
	sched.SchedulePod = f.schedulePod
	sched.Cache = failureCache{sched.Cache, f}
	sched.SchedulingQueue = failureQueue{sched.SchedulingQueue, f}
	for name, built := range sched.Profiles {
		sched.Profiles[name] = failureFramework{built, f}
	}
	return f
}

// profileRead: every PreFilter, Filter and PostFilter plugin is read, and no default constraint reads listers.
func profileRead(profile kubeschedulerconfig.KubeSchedulerProfile, built framework.Framework) bool {
	if built == nil {
		return false
	}
	plugins := built.ListPlugins()
	for _, set := range []kubeschedulerconfig.PluginSet{plugins.PreFilter, plugins.Filter, plugins.PostFilter} {
		for _, plugin := range set.Enabled {
			if !readPlugins.Has(plugin.Name) {
				return false
			}
		}
	}
	for _, config := range profile.PluginConfig {
		if args, ok := config.Args.(*kubeschedulerconfig.PodTopologySpreadArgs); ok &&
			args.DefaultingType == kubeschedulerconfig.ListDefaulting {
			for _, constraint := range args.DefaultConstraints {
				if constraint.WhenUnsatisfiable == v1.DoNotSchedule {
					return false
				}
			}
		}
	}
	return true
}

func (f *failures) moved() { f.gen.Add(1) }

// podRead: the pod reads nothing but its key, the snapshot and the nominated pods.
func podRead(pod *v1.Pod) bool {
	if len(pod.Spec.Volumes) > 0 || len(pod.Spec.ResourceClaims) > 0 || pod.Status.NominatedNodeName != "" {
		return false
	}
	if affinity := pod.Spec.Affinity; affinity != nil {
		var terms []v1.PodAffinityTerm
		if a := affinity.PodAffinity; a != nil {
			terms = append(terms, a.RequiredDuringSchedulingIgnoredDuringExecution...)
			for _, t := range a.PreferredDuringSchedulingIgnoredDuringExecution {
				terms = append(terms, t.PodAffinityTerm)
			}
		}
		if a := affinity.PodAntiAffinity; a != nil {
			terms = append(terms, a.RequiredDuringSchedulingIgnoredDuringExecution...)
			for _, t := range a.PreferredDuringSchedulingIgnoredDuringExecution {
				terms = append(terms, t.PodAffinityTerm)
			}
		}
		for _, term := range terms {
			if term.NamespaceSelector != nil {
				return false
			}
		}
	}
	return true
}

// key is the pod's scheduling content: the pod less what no plugin of a served profile reads, with its
// namespace's labels. It is made once per pod version, profile and namespace version (kept with the content).
func (f *failures) key(profile string, pod *v1.Pod) string {
	ns, err := f.namespaces.Get(pod.Namespace)
	version := "-"
	if err == nil {
		version = ns.ResourceVersion
	}
	if kept, ok := f.contents[pod.UID]; ok && pod.ResourceVersion != "" && kept.resourceVersion == pod.ResourceVersion &&
		kept.key != "" && kept.profile == profile && version != "" && kept.namespace == version {
		return kept.key
	}
	data := f.content(pod)
	if data == "" {
		return ""
	}
	namespace := "-"
	if err == nil {
		namespace = labels.Set(ns.Labels).String()
	}
	key := profile + "\x00" + namespace + "\x00" + data
	if kept, ok := f.contents[pod.UID]; ok && kept.resourceVersion == pod.ResourceVersion && version != "" {
		kept.key, kept.profile, kept.namespace = key, profile, version
		f.contents[pod.UID] = kept
	}
	return key
}

// content is the pod's scheduling content, marshalled ("" if it cannot be), once per uid and resourceVersion.
func (f *failures) content(pod *v1.Pod) string {
	kept, ok := f.contents[pod.UID]
	if ok && pod.ResourceVersion != "" && kept.resourceVersion == pod.ResourceVersion {
		return kept.data
	}
	read := v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Labels: pod.Labels,
			OwnerReferences: pod.OwnerReferences, DeletionTimestamp: pod.DeletionTimestamp},
		Spec: pod.Spec,
		Status: v1.PodStatus{Phase: pod.Status.Phase, QOSClass: pod.Status.QOSClass,
			ContainerStatuses:          pod.Status.ContainerStatuses,
			InitContainerStatuses:      pod.Status.InitContainerStatuses,
			EphemeralContainerStatuses: pod.Status.EphemeralContainerStatuses,
			Resize:                     pod.Status.Resize, //nolint:staticcheck // read by NodeResourcesFit
			ResourceClaimStatuses:      pod.Status.ResourceClaimStatuses},
	}
	data, err := read.Marshal()
	if err != nil {
		return ""
	}
	if pod.ResourceVersion != "" {
		f.contents[pod.UID] = content{resourceVersion: pod.ResourceVersion, data: string(data)}
	}
	return string(data)
}

// schedulePod is sched.SchedulePod, answered from the cache when the same pod content failed at this state.
func (f *failures) schedulePod(ctx context.Context, profile framework.Framework, state fwk.CycleState,
	pod *v1.Pod) (scheduler.ScheduleResult, error) {
	f.attempt = nil
	if f.off.Load() || !f.profiles.Has(profile.ProfileName()) || !podRead(pod) {
		result, err := f.schedule(ctx, profile, state, pod)
		f.nominationSeen(pod)
		return result, err
	}
	key := f.key(profile.ProfileName(), pod)
	gen := f.gen.Load()
	if key == "" {
		return f.schedule(ctx, profile, state, pod)
	}
	if kept, ok := f.answers[key]; ok && kept.gen == gen {
		f.attempt = &attempt{key: key, gen: gen, answer: kept, hit: true}
		if hits := f.hits.Add(1); milestone(hits) {
			klog.FromContext(ctx).Info("Failed attempts answered again", "count", hits)
		}
		fitError := kept.fitError(pod)
		f.given.Store(&givenError{fitError, kept})
		return scheduler.ScheduleResult{}, fitError
	}
	result, err := f.schedule(ctx, profile, state, pod)
	if fitError, ok := err.(*framework.FitError); ok && fitError.NumAllNodes > 0 &&
		fitError.Diagnosis.NodeToStatus.Len()%fitError.NumAllNodes == 0 && f.gen.Load() == gen {
		f.attempt = &attempt{key: key, gen: gen, answer: &answer{gen: gen, numAllNodes: fitError.NumAllNodes,
			diagnosis: owned(fitError.Diagnosis)}}
	}
	return result, err
}

// fitError is the kept FitError for pod, its reasons given as made once (see reasonsMessage).
func (a *answer) fitError(pod *v1.Pod) *framework.FitError {
	diagnosis := owned(a.diagnosis)
	if a.reasons == nil {
		reasons := reasonsMessage(a.numAllNodes, a.diagnosis)
		a.reasons = &reasons
	}
	diagnosis.PreFilterMsg = *a.reasons
	return &framework.FitError{Pod: pod, NumAllNodes: a.numAllNodes, Diagnosis: diagnosis}
}

// reasonsMessage is what FitError.Error writes between "0/N nodes are available: " and the "." that ends it for
// this diagnosis (no PostFilterMsg): its PreFilterMsg if it has one, else the sorted histogram of the nodes'
// reasons, which Error counts over every node at each call. Error writes a non-empty PreFilterMsg in the same
// place and form (" %v."), and nothing else in kube-scheduler reads PreFilterMsg (v1.34: schedule_one.go sets it,
// types.go's Error reads it): a kept answer given with its histogram as PreFilterMsg has the same message, made
// without counting again. "" (no reason at all) leaves Error to count.
func reasonsMessage(numAllNodes int, diagnosis framework.Diagnosis) string {
	if diagnosis.PreFilterMsg != "" {
		return diagnosis.PreFilterMsg
	}
	diagnosis.PostFilterMsg = ""
	full := (&framework.FitError{NumAllNodes: numAllNodes, Diagnosis: diagnosis}).Error()
	prefix := fmt.Sprintf(framework.NoNodeAvailableMsg+":", numAllNodes)
	if !strings.HasPrefix(full, prefix+" ") || len(full) < len(prefix)+3 || full[len(full)-1] != '.' {
		return ""
	}
	return full[len(prefix)+1 : len(full)-1]
}

// message is err.Error() when err is the last FitError given from the cache, made once per answer (and PostFilter
// message): the same inputs (node count, PreFilterMsg, PostFilterMsg; Error reads the nodes' statuses only when
// PreFilterMsg is "", never the case here), the same text. The failure handler asks it for the status message of
// a failed attempt: for that FitError the status is schedulingCycle's NewStatus(Unschedulable).WithError(err),
// with no reason of its own, so its Message() is err.Error() (v1.34 schedule_one.go, kube-scheduler framework's
// Status). false: not such a FitError.
func (f *failures) message(err error) (string, bool) {
	g := f.given.Load()
	fitError, ok := err.(*framework.FitError)
	if g == nil || !ok || fitError != g.err {
		return "", false
	}
	a := g.answer
	if a.reasons == nil || *a.reasons == "" || fitError.Diagnosis.PreFilterMsg != *a.reasons {
		return "", false
	}
	if m := a.message; m == nil || m.postFilter != fitError.Diagnosis.PostFilterMsg || m.nodes != fitError.NumAllNodes {
		a.message = &keptMessage{fitError.Diagnosis.PostFilterMsg, fitError.NumAllNodes, fitError.Error()}
	}
	return a.message.text, true
}

// owned is the diagnosis with sets of its own: the queue adds to a pod's unschedulable plugins in place.
func owned(diagnosis framework.Diagnosis) framework.Diagnosis {
	if diagnosis.UnschedulablePlugins != nil {
		diagnosis.UnschedulablePlugins = diagnosis.UnschedulablePlugins.Clone()
	}
	if diagnosis.PendingPlugins != nil {
		diagnosis.PendingPlugins = diagnosis.PendingPlugins.Clone()
	}
	return diagnosis
}

// postFilter is the framework's RunPostFilterPlugins, answered from the cache on a hit; a failed attempt's answer
// is kept if PostFilter nominated nothing and the state did not move.
func (f *failures) postFilter(run func() (*framework.PostFilterResult, *fwk.Status)) (
	*framework.PostFilterResult, *fwk.Status) {
	a := f.attempt
	f.attempt = nil
	if a != nil && a.hit {
		return a.answer.result, a.answer.status
	}
	result, status := run()
	if result != nil && result.NominatingInfo != nil && result.NominatedNodeName != "" {
		f.off.Store(true)
		return result, status
	}
	if a != nil && f.gen.Load() == a.gen && !f.off.Load() &&
		(status.Code() == fwk.Unschedulable || status.Code() == fwk.UnschedulableAndUnresolvable) {
		a.answer.result, a.answer.status = result, status
		f.answers[a.key] = a.answer
	}
	return result, status
}

// nominationSeen turns the cache off for good once a pod with a nominated node is seen.
func (f *failures) nominationSeen(pods ...*v1.Pod) {
	for _, pod := range pods {
		if pod != nil && pod.Status.NominatedNodeName != "" {
			f.off.Store(true)
		}
	}
}

// failureFramework is a profile's framework, its PostFilter answered from the cache on a hit.
type failureFramework struct {
	framework.Framework
	f *failures
}

func (w failureFramework) RunPostFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod,
	m framework.NodeToStatusReader) (*framework.PostFilterResult, *fwk.Status) {
	return w.f.postFilter(func() (*framework.PostFilterResult, *fwk.Status) {
		return w.Framework.RunPostFilterPlugins(ctx, state, pod, m)
	})
}

// failureCache is the scheduler cache; each change moves the generation before and after it.
type failureCache struct {
	internalcache.Cache
	f *failures
}

func (c failureCache) AssumePod(logger klog.Logger, pod *v1.Pod) error {
	c.f.moved()
	defer c.f.moved()
	return c.Cache.AssumePod(logger, pod)
}

func (c failureCache) ForgetPod(logger klog.Logger, pod *v1.Pod) error {
	c.f.moved()
	defer c.f.moved()
	return c.Cache.ForgetPod(logger, pod)
}

func (c failureCache) AddPod(logger klog.Logger, pod *v1.Pod) error {
	c.f.moved()
	defer c.f.moved()
	return c.Cache.AddPod(logger, pod)
}

func (c failureCache) UpdatePod(logger klog.Logger, oldPod, newPod *v1.Pod) error {
	c.f.moved()
	defer c.f.moved()
	return c.Cache.UpdatePod(logger, oldPod, newPod)
}

func (c failureCache) RemovePod(logger klog.Logger, pod *v1.Pod) error {
	c.f.moved()
	defer c.f.moved()
	return c.Cache.RemovePod(logger, pod)
}

func (c failureCache) AddNode(logger klog.Logger, node *v1.Node) *framework.NodeInfo {
	c.f.moved()
	defer c.f.moved()
	return c.Cache.AddNode(logger, node)
}

func (c failureCache) UpdateNode(logger klog.Logger, oldNode, newNode *v1.Node) *framework.NodeInfo {
	c.f.moved()
	defer c.f.moved()
	return c.Cache.UpdateNode(logger, oldNode, newNode)
}

func (c failureCache) RemoveNode(logger klog.Logger, node *v1.Node) error {
	c.f.moved()
	defer c.f.moved()
	return c.Cache.RemoveNode(logger, node)
}

// failureQueue is the scheduling queue; cluster events move the generation, nominations turn the cache off.
type failureQueue struct {
	queue.SchedulingQueue
	f *failures
}

func (q failureQueue) Add(logger klog.Logger, pod *v1.Pod) {
	q.f.nominationSeen(pod)
	q.SchedulingQueue.Add(logger, pod)
}

func (q failureQueue) Update(logger klog.Logger, oldPod, newPod *v1.Pod) {
	q.f.nominationSeen(oldPod, newPod)
	q.SchedulingQueue.Update(logger, oldPod, newPod)
}

func (q failureQueue) AddNominatedPod(logger klog.Logger, pod fwk.PodInfo, nominatingInfo *framework.NominatingInfo) {
	if nominatingInfo.Mode() == framework.ModeOverride && nominatingInfo.NominatedNodeName != "" {
		q.f.off.Store(true)
	}
	q.f.nominationSeen(pod.GetPod())
	q.SchedulingQueue.AddNominatedPod(logger, pod, nominatingInfo)
}

func (q failureQueue) MoveAllToActiveOrBackoffQueue(logger klog.Logger, event fwk.ClusterEvent, oldObj,
	newObj interface{}, preCheck queue.PreEnqueueCheck) {
	q.f.moved()
	defer q.f.moved()
	q.SchedulingQueue.MoveAllToActiveOrBackoffQueue(logger, event, oldObj, newObj, preCheck)
}
