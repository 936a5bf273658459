package simulation

// Event labels made once: the scheduler's pod events carry their label, so the queue does not format it again at
// every pod it moves.
//
// The scheduling queue names the cluster event that moves a pod in its metrics, its logs and its checks
// (ClusterEvent.Label: the CustomLabel if there is one, else fmt.Sprintf("%v%v", Resource, ActionType)). On a
// saturated cluster every pod completion (an AssignedPodDelete) moves every waiting pod, and upstream formats that
// label about five times per pod moved: for the queueing hint's duration metric, the move's log line and its
// incoming-pods metric, and twice in moveToActiveQ to compare it with EventUnscheduledPodAdd's and
// EventUnscheduledPodUpdate's labels (v1.34 backend/queue/scheduling_queue.go). The six pod events are package
// variables of the scheduler's framework (framework/events.go), read by the event handlers and the queue when they
// are used. The build sets each one's CustomLabel to the label it has, once, before the scheduler is made: the same
// strings everywhere, formatted once. Nothing else reads CustomLabel (the events are matched by Resource and
// ActionType: MatchClusterEvents, ClusterEventIsWildCard), and no code of the scheduler compares these events as
// whole values or keys a map with them (v1.34: the queueing hint maps are keyed by the plugins' own registrations).
// --event-labels-once=false leaves them as upstream.

import (
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// labelledEvents: the scheduler's pod events whose label upstream formats at each use.
func labelledEvents() []*fwk.ClusterEvent {
	return []*fwk.ClusterEvent{&framework.EventAssignedPodAdd, &framework.EventAssignedPodUpdate,
		&framework.EventAssignedPodDelete, &framework.EventUnscheduledPodAdd, &framework.EventUnscheduledPodUpdate,
		&framework.EventUnscheduledPodDelete}
}

// labelEventsOnce gives each of the scheduler's pod events the label it has as its CustomLabel. Called before the
// scheduler is made (no goroutine reads them yet).
func labelEventsOnce() {
	for _, event := range labelledEvents() {
		if event.CustomLabel == "" {
			event.CustomLabel = event.Label()
		}
	}
}
