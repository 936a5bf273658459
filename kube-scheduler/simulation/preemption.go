package simulation

// Preemption without victims: the simulation build answers DefaultPreemption's PostFilter without its dry run when
// no node the dry run would visit holds a pod of lower priority than the preemptor.
//
// Upstream (v1.34, pkg/scheduler/framework/preemption, Evaluator.Preempt) runs the dry run for every pod that failed
// in Filter on at least one node with an Unschedulable status: for each such node it copies the NodeInfo
// (NodeInfo.Snapshot) and the cycle state, and DefaultPreemption.SelectVictimsOnNode walks the node's pods for one
// of lower priority. With no such pod, every node answers UnschedulableAndUnresolvable "No preemption victims found
// for incoming pod", there is no candidate, and Preempt returns NewPostFilterResultWithNominatedNode("") with an
// Unschedulable status whose message is the FitError of those node statuses (absent nodes: "Preemption is not
// helpful for scheduling"), which PostFilter prefixes with "preemption: ". On a saturated cluster of pods of equal
// priority that is every failed attempt, at the cost of one NodeInfo copy per node.
//
// The shortcut takes upstream's own steps up to the dry run (the pod read again from the lister, its eligibility,
// the snapshot's nodes, NodesForStatusCode, the PodDisruptionBudgets listed) and, when no potential node holds a pod
// of lower priority, gives that same result, its message made by upstream's FitError.Error from the same node
// statuses (kept per count of potential nodes and of all nodes: the message depends on nothing else). The one
// thing it does not do is the dry run's draw of a random offset (GetOffsetAndNumCandidates) from math/rand's global
// source: the cycle then ends in failure with no other draw, and the next cycle seeds the source again (idle.go).
// Any other case (a pod of lower priority anywhere the dry run looks, a nominated node, preemptionPolicy Never, an
// error, no potential node) runs upstream's PostFilter.

import (
	"context"
	"reflect"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

const (
	noVictims  = "No preemption victims found for incoming pod" // SelectVictimsOnNode's
	notHelpful = "Preemption is not helpful for scheduling"     // Evaluator.Preempt's
)

// noVictimsPreemption is the profile's DefaultPreemption plugin, its PostFilter answered without the dry run when
// the dry run could find no victim.
type noVictimsPreemption struct {
	*defaultpreemption.DefaultPreemption
	messages map[[2]int]string // (potential nodes, all nodes): the PostFilter message; the scheduling goroutine's
	answered *int              // dry runs not run, logged at 1024, 2048, 4096...
	lowest   map[string]lowest // per node name: the lowest priority of its pods, at a NodeInfo generation
}

// lowest is the lowest priority of a node's pods (pods: whether it has any) when its NodeInfo had generation gen.
// The scheduler cache gives a NodeInfo a new generation, from one counter for all nodes, at every change of its
// node or pods (SetNode, AddPod, RemovePod; a pod's update is a removal and an add), and the snapshot's NodeInfos
// carry their cache entry's generation: the same name and generation are the same pods.
type lowest struct {
	gen      int64
	priority int32
	pods     bool
}

// attachPreemption puts the shortcut in every profile of sched whose PostFilter plugins include the in-tree
// DefaultPreemption. The framework keeps its PostFilter plugins in an unexported slice (no option replaces one
// plugin by a wrapper of it): it is read and written through reflection, and left as it is if its shape is not
// the one expected.
func attachPreemption(ctx context.Context, sched *scheduler.Scheduler) {
	for name, profile := range sched.Profiles {
		value := reflect.ValueOf(profile)
		if value.Kind() != reflect.Pointer || value.Elem().Kind() != reflect.Struct {
			continue
		}
		field := value.Elem().FieldByName("postFilterPlugins")
		if !field.IsValid() || field.Type() != reflect.TypeOf([]framework.PostFilterPlugin(nil)) {
			klog.FromContext(ctx).Info("Preemption shortcut not used: unexpected framework", "profile", name)
			continue
		}
		plugins := *(*[]framework.PostFilterPlugin)(unsafe.Pointer(field.UnsafeAddr()))
		for i, plugin := range plugins {
			if preemption, ok := plugin.(*defaultpreemption.DefaultPreemption); ok && preemption.Evaluator != nil {
				plugins[i] = noVictimsPreemption{preemption, map[[2]int]string{}, new(int),
					map[string]lowest{}}
			}
		}
	}
}

// PostFilter is DefaultPreemption's, without the dry run when it could find no victim.
func (p noVictimsPreemption) PostFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod,
	m framework.NodeToStatusReader) (*framework.PostFilterResult, *fwk.Status) {
	if message, ok := p.withoutVictims(pod, m); ok {
		metrics.PreemptionAttempts.Inc()
		if *p.answered++; milestone(*p.answered) {
			klog.FromContext(ctx).Info("Preemption dry runs without victims not run", "count", *p.answered)
		}
		return framework.NewPostFilterResultWithNominatedNode(""), fwk.NewStatus(fwk.Unschedulable, message)
	}
	return p.DefaultPreemption.PostFilter(ctx, state, pod, m)
}

// lowestPriority is the lowest priority of the node's pods, counted again only when its NodeInfo changed (a
// saturated cluster's misses asked it of every node, every pod, at every failure).
func (p noVictimsPreemption) lowestPriority(node fwk.NodeInfo) lowest {
	name := node.Node().Name
	if kept, ok := p.lowest[name]; ok && kept.gen == node.GetGeneration() {
		return kept
	}
	low := lowest{gen: node.GetGeneration()}
	for _, pod := range node.GetPods() {
		if priority := corev1helpers.PodPriority(pod.GetPod()); !low.pods || priority < low.priority {
			low.priority, low.pods = priority, true
		}
	}
	p.lowest[name] = low
	return low
}

// withoutVictims follows Evaluator.Preempt up to the dry run; when no potential node holds a pod of lower
// priority, it returns the message PostFilter would return.
func (p noVictimsPreemption) withoutVictims(pod *v1.Pod, m framework.NodeToStatusReader) (string, bool) {
	ev := p.Evaluator
	pod, err := ev.PodLister.Pods(pod.Namespace).Get(pod.Name) // Preempt's step 0: the latest version
	if err != nil || pod.Status.NominatedNodeName != "" ||
		(pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever) {
		return "", false // PodEligibleToPreemptOthers reads more than the pod: upstream's path
	}
	lister := ev.Handler.SnapshotSharedLister().NodeInfos()
	allNodes, err := lister.List()
	if err != nil || len(allNodes) == 0 {
		return "", false
	}
	potential, err := m.NodesForStatusCode(lister, fwk.Unschedulable)
	if err != nil || len(potential) == 0 {
		return "", false
	}
	if ev.PdbLister != nil {
		if _, err := ev.PdbLister.List(labels.Everything()); err != nil {
			return "", false
		}
	}
	priority := corev1helpers.PodPriority(pod)
	for _, node := range potential {
		if low := p.lowestPriority(node); low.pods && low.priority < priority { // isPreemptionAllowed's first condition
			return "", false
		}
	}
	counts := [2]int{len(potential), len(allNodes)}
	if message, ok := p.messages[counts]; ok {
		return message, true
	}
	statuses := framework.NewDefaultNodeToStatus() // as DryRunPreemption and Preempt make them
	for _, node := range potential {
		statuses.Set(node.Node().Name, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, noVictims))
	}
	fitError := &framework.FitError{Pod: pod, NumAllNodes: len(allNodes),
		Diagnosis: framework.Diagnosis{NodeToStatus: statuses}}
	fitError.Diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable, notHelpful))
	message := "preemption: " + fitError.Error() // DefaultPreemption.PostFilter's prefix
	p.messages[counts] = message
	return message, true
}
