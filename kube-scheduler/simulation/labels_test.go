package simulation

import (
	"testing"

	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// TestEventLabelsMadeOnceAreUpstreams: each pod event labelled once has the label upstream formats, still matches
// (and only matches) what it matched, and a second call changes nothing.
func TestEventLabelsMadeOnceAreUpstreams(t *testing.T) {
	events := labelledEvents()
	before := make([]fwk.ClusterEvent, len(events))
	for i, event := range events {
		if event.CustomLabel != "" {
			t.Fatalf("%v already has a custom label %q", *event, event.CustomLabel)
		}
		before[i] = *event
	}
	defer func() {
		for i, event := range events {
			*event = before[i]
		}
	}()
	labelEventsOnce()
	labelEventsOnce()
	for i, event := range events {
		if got, want := event.Label(), before[i].Label(); got != want || event.CustomLabel != want {
			t.Errorf("label %q (custom %q), upstream's %q", got, event.CustomLabel, want)
		}
		if event.Resource != before[i].Resource || event.ActionType != before[i].ActionType {
			t.Errorf("%v changed beyond its label: %v", before[i], *event)
		}
		for j := range before {
			registered := before[j]
			if framework.MatchClusterEvents(registered, *event) != framework.MatchClusterEvents(registered, before[i]) {
				t.Errorf("%v matches %v differently once labelled", *event, registered)
			}
		}
	}
	if framework.EventAssignedPodDelete.Label() != "AssignedPodDelete" {
		t.Errorf("AssignedPodDelete's label: %q", framework.EventAssignedPodDelete.Label())
	}
}
