package simulation

// Events: the simulation build hands the event recorder the first two of a pod's repeated FailedScheduling events,
// then one a period (--failure-event-repeats), not every one.
//
// On a saturated cluster every waiting pod fails again at every pod completion, and upstream records a
// FailedScheduling event each time: the recorder builds the event and copies it twice over two goroutines, only for
// the broadcaster to find the same event in its cache (same type, action, reason, reporting controller and
// instance, and regarding object: the pod at the same resourceVersion) and count it in that event's series. The API
// sees the first event (created) and the second (the series starts, count 2); later ones change only the cached
// series' count and last observed time, which the broadcaster sends on its own wall-clock timers (every 30 min, and
// when a series has not been observed for 6 min). The event's message is the first one's: the message is not part
// of what makes events the same. Each handled event took about a fifth of a failed attempt's CPU, of the scheduler's
// goroutines and of the facade's (which answered one request in ten for them).
//
// So the repeats beyond the second, at the same pod resourceVersion, are handed over at most once per period of wall
// time: the series still starts as upstream's and is still observed (within the period, under the broadcaster's
// 6 min), but its count is that of the events handed over. Nothing in the scheduler reads events: the schedule is
// the same. Events for other reasons, and with a related object, are all handed over. --failure-event-repeats=0
// turns it off.

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
)

// repeatedFailures is an event recorder that hands a pod's repeated FailedScheduling events on sparingly.
type repeatedFailures struct {
	events.EventRecorder
	period time.Duration
	mu     sync.Mutex
	pods   map[types.UID]*repeats
	kept   int // events not handed over
}

// repeats: the FailedScheduling events handed over for one pod at one resourceVersion.
type repeats struct {
	resourceVersion string
	handed          int
	last            time.Time
}

func newRepeatedFailures(recorder events.EventRecorder, period time.Duration) events.EventRecorder {
	if period <= 0 {
		return recorder
	}
	return &repeatedFailures{EventRecorder: recorder, period: period, pods: map[types.UID]*repeats{}}
}

func (r *repeatedFailures) Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action,
	note string, args ...interface{}) {
	if pod, ok := regarding.(*v1.Pod); !ok || related != nil || reason != "FailedScheduling" || r.handOver(pod) {
		r.EventRecorder.Eventf(regarding, related, eventtype, reason, action, note, args...)
	}
}

// handOver: the event is one of the first two for the pod at its resourceVersion, or the first in a period.
func (r *repeatedFailures) handOver(pod *v1.Pod) bool {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.pods[pod.UID]
	if seen == nil || seen.resourceVersion != pod.ResourceVersion {
		seen = &repeats{resourceVersion: pod.ResourceVersion}
		r.pods[pod.UID] = seen
	}
	if seen.handed >= 2 && now.Sub(seen.last) < r.period {
		if r.kept++; milestone(r.kept) {
			klog.Background().Info("Repeated FailedScheduling events not handed over", "count", r.kept)
		}
		return false
	}
	seen.handed++
	seen.last = now
	return true
}
