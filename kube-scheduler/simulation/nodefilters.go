package simulation

// Node filters: the simulation build gives a node's Filter verdict again when neither the node nor the pod's
// scheduling content changed since that verdict.
//
// While a saturated cluster fills, every binding moves the cluster state, so most attempts miss the cache of
// failed attempts (failures.go); but a binding changes one node, and the other nodes' verdicts are what they
// were. The scheduler's cycle (findNodesThatPassFilters) calls the profile's RunFilterPluginsWithNominatedPods
// once per node, in the same order whatever it answers; this build answers that call from the kept verdict when:
//
//   - the attempt may use the cache of failed attempts (failures.go: a served profile, a pod that reads nothing
//     but its key and the snapshot, no nomination ever seen), and its key is the kept verdict's key;
//   - every Filter plugin that runs in this cycle (the profile's, less those its PreFilter skipped) is one whose
//     verdict is a function of the pod, its PreFilter state and the node's NodeInfo only (nodeLocal);
//     InterPodAffinity and PodTopologySpread read other nodes, so a cycle where they run uses no kept verdict;
//     the volume and DRA plugins skip pods without volumes and claims, which podRead requires;
//   - no pod is nominated to the node (then the call is RunFilterPlugins on the node, nothing added);
//   - the node's NodeInfo has the kept verdict's generation: NodeInfo.Generation comes from one counter for the
//     whole scheduler and moves at every change of the node object or of its pods (k8s.io/kubernetes
//     pkg/scheduler/framework/types.go: SetNode, AddPod, RemovePod, NewNodeInfo), and the snapshot's copy keeps
//     it: the same generation is the same NodeInfo.
//
// The PreFilter states the nodeLocal plugins read are functions of the pod only (NodeResourcesFit: its requests,
// NodePorts: its ports, NodeAffinity: its selector and affinity and the plugin's arguments), so the verdict is
// the same; it is given as a new Status with the same code, reasons and plugin, so the Diagnosis (NodeToStatus,
// unschedulable plugins), the FitError message and everything after them are those of a full run. Error
// statuses are never kept. DRAExtendedResource (NodeResourcesFit then reads ResourceSlices) turns it off.

import (
	"context"
	"slices"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// nodeLocal: the in-tree Filter plugins whose verdict reads only the pod, its PreFilter state (made from the pod)
// and the node's NodeInfo (v1.34 sources, pkg/scheduler/framework/plugins).
var nodeLocal = sets.New("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
	"NodeResourcesFit")

// nodeFilters keeps Filter verdicts per pod key and node. Used by the scheduling goroutine only, but hits.
type nodeFilters struct {
	others   map[string][]string // per profile: its Filter plugins not in nodeLocal
	verdicts map[string]map[string]verdict
	hits     atomic.Int64
}

type verdict struct {
	generation int64
	code       fwk.Code
	reasons    []string
	plugin     string
}

// newNodeFilters serves the profiles the cache of failed attempts serves, or none with DRAExtendedResource.
func newNodeFilters(profiles map[string]framework.Framework, served sets.Set[string]) *nodeFilters {
	n := &nodeFilters{others: map[string][]string{}, verdicts: map[string]map[string]verdict{}}
	if utilfeature.DefaultFeatureGate.Enabled(features.DRAExtendedResource) {
		return n
	}
	for name, profile := range profiles {
		if !served.Has(name) {
			continue
		}
		others := []string{}
		for _, plugin := range profile.ListPlugins().Filter.Enabled {
			if !nodeLocal.Has(plugin.Name) {
				others = append(others, plugin.Name)
			}
		}
		n.others[name] = others
	}
	return n
}

// filter is the profile's RunFilterPluginsWithNominatedPods on one node, given again when kept (see above); key
// is the attempt's pod key ("" when the cache of failed attempts may not serve it).
func (n *nodeFilters) filter(ctx context.Context, profile framework.Framework, key string, state fwk.CycleState,
	pod *v1.Pod, info fwk.NodeInfo, run func() *fwk.Status) *fwk.Status {
	others, served := n.others[profile.ProfileName()]
	node := info.Node()
	if key == "" || !served || node == nil || !skipped(state, others) ||
		len(profile.NominatedPodsForNode(node.Name)) > 0 {
		return run()
	}
	generation := info.GetGeneration()
	kept := n.verdicts[key]
	if v, ok := kept[node.Name]; ok && v.generation == generation {
		if hits := n.hits.Add(1); hits >= 1024 && hits&(hits-1) == 0 { // at 1024, 2048, 4096...
			klog.FromContext(ctx).Info("Node filter verdicts given again", "count", hits)
		}
		if v.code == fwk.Success {
			return nil
		}
		return fwk.NewStatus(v.code, slices.Clone(v.reasons)...).WithPlugin(v.plugin)
	}
	status := run()
	if status == nil || status.IsRejected() { // nil: what RunFilterPlugins gives for a node that fits
		if kept == nil {
			kept = map[string]verdict{}
			n.verdicts[key] = kept
		}
		v := verdict{generation: generation, code: fwk.Success}
		if status != nil {
			v.code, v.reasons, v.plugin = status.Code(), slices.Clone(status.Reasons()), status.Plugin()
		}
		kept[node.Name] = v
	}
	return status
}

// skipped: every one of plugins is skipped in this cycle.
func skipped(state fwk.CycleState, plugins []string) bool {
	if len(plugins) == 0 {
		return true
	}
	skip := state.GetSkipFilterPlugins()
	for _, plugin := range plugins {
		if !skip.Has(plugin) {
			return false
		}
	}
	return true
}
