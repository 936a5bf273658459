// Package podpacking is an example out-of-tree plugin for the simulation build: a Score plugin that prefers
// the nodes already running the most pods, so that pods pack onto few nodes (with a weight above the default
// plugins' it overrides their spreading). Enable it in a profile of the KubeSchedulerConfiguration:
//
//	profiles:
//	- plugins:
//	    score:
//	      enabled:
//	      - name: PodPacking
//	        weight: 10
package podpacking

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Name is the plugin's name in a KubeSchedulerConfiguration.
const Name = "PodPacking"

// PodPacking scores a node by the number of pods it runs, normalized to 0..MaxNodeScore.
type PodPacking struct{}

var _ framework.ScorePlugin = &PodPacking{}

// New is the plugin's factory, for app.WithPlugin(Name, New).
func New(_ context.Context, _ runtime.Object, _ framework.Handle) (framework.Plugin, error) {
	return &PodPacking{}, nil
}

// Name returns the plugin's name.
func (*PodPacking) Name() string { return Name }

// Score is the number of pods on the node.
func (*PodPacking) Score(_ context.Context, _ fwk.CycleState, _ *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	return int64(len(nodeInfo.GetPods())), nil
}

// ScoreExtensions normalizes the scores.
func (pl *PodPacking) ScoreExtensions() framework.ScoreExtensions { return pl }

// NormalizeScore scales the scores so that the fullest node gets MaxNodeScore.
func (*PodPacking) NormalizeScore(_ context.Context, _ fwk.CycleState, _ *v1.Pod, scores framework.NodeScoreList) *fwk.Status {
	var highest int64
	for _, score := range scores {
		highest = max(highest, score.Score)
	}
	if highest == 0 {
		return nil
	}
	for i := range scores {
		scores[i].Score = scores[i].Score * framework.MaxNodeScore / highest
	}
	return nil
}
