package simulation

import (
	"fmt"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// A kept answer's FitError has upstream's message: the diagnosis's own, with every PostFilter message; and so has
// the failure handler's message for it.
func TestKeptAnswerHasTheSameMessage(t *testing.T) {
	reasons := []string{"Insufficient cpu", "Insufficient memory", "node(s) had untolerated taint {a: b}",
		"Too many pods", "node(s) didn't match Pod's node affinity/selector"}
	postFilter := []string{"", "preemption: 0/7 nodes are available: 7 No preemption victims found for incoming pod.",
		"preemption: not eligible due to preemptionPolicy=Never."}
	random := rand.New(rand.NewSource(1))
	f := &failures{}
	for trial := 0; trial < 2000; trial++ {
		numAllNodes := 1 + random.Intn(30)
		statuses := framework.NewDefaultNodeToStatus()
		for node := 0; node < numAllNodes; node++ {
			if random.Intn(4) == 0 {
				continue // absent: counted with the absent nodes' status
			}
			var nodeReasons []string
			for _, reason := range reasons {
				if random.Intn(3) == 0 {
					nodeReasons = append(nodeReasons, reason)
				}
			}
			statuses.Set(fmt.Sprintf("node-%d", node), fwk.NewStatus(fwk.Unschedulable, nodeReasons...))
		}
		if random.Intn(2) == 0 {
			statuses.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reasons[random.Intn(5)]))
		}
		diagnosis := framework.Diagnosis{NodeToStatus: statuses}
		if random.Intn(5) == 0 {
			diagnosis.PreFilterMsg = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
		}
		kept := &answer{numAllNodes: numAllNodes, diagnosis: diagnosis}
		pod := &v1.Pod{}
		for _, message := range postFilter {
			original := &framework.FitError{Pod: pod, NumAllNodes: numAllNodes, Diagnosis: diagnosis}
			original.Diagnosis.PostFilterMsg = message // as schedulingCycle sets it, on either FitError
			given := kept.fitError(pod)
			given.Diagnosis.PostFilterMsg = message
			if got, want := given.Error(), original.Error(); got != want {
				t.Fatalf("trial %d: kept answer's message %q, upstream's %q", trial, got, want)
			}
			// The failure handler's message, made once per answer, is the status's as schedulingCycle makes it.
			f.given.Store(&givenError{given, kept})
			want := fwk.NewStatus(fwk.Unschedulable).WithError(original).Message()
			if got, ok := f.message(given); ok && got != want || !ok && *kept.reasons != "" {
				t.Fatalf("trial %d: handler's message %q (%v), upstream's %q", trial, got, ok, want)
			}
			if _, ok := f.message(original); ok {
				t.Fatalf("trial %d: a message given for a FitError not given from the cache", trial)
			}
		}
	}
}
