package queue

// Added to upstream's code: the metrics' children the queue asks for at every pod it moves, pops or puts back,
// kept.
//
// Upstream's queue asks a metric vector for the child of its labels each time (metrics.UnschedulableReason's
// With, SchedulerQueueIncomingPods' and FrameworkExtensionPointDuration's WithLabelValues: the labels made into a
// map or checked, hashed and looked up, at every call). A vector gives the same child for the same labels until
// it is reset or the child deleted, and nothing in kube-scheduler v1.34 resets or deletes these three (only tests
// reset the registry); scheduler.New registers them before it makes the queue. So the queue keeps each child the
// first time it asks for it, and counts on the same child afterwards.

import (
	"sync"

	"k8s.io/component-base/metrics"

	schedulermetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
)

// children: one vector's children, by their labels.
type children[M any] struct {
	mu   sync.Mutex
	kept map[[3]string]M
}

func (c *children[M]) get(labels [3]string, make func() M) M {
	if !registered() { // a vector not registered gives a no-op child, and would give a real one once registered
		return make()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	child, ok := c.kept[labels]
	if !ok {
		if c.kept == nil {
			c.kept = map[[3]string]M{}
		}
		child = make()
		c.kept[labels] = child
	}
	return child
}

var (
	unschedulableReasons children[metrics.GaugeMetric]
	incomingPods         children[metrics.CounterMetric]
	extensionDurations   children[metrics.ObserverMetric]
)

// registered: scheduler.New has registered the scheduler's metrics (metrics.Register registers them all at once).
func registered() bool {
	return schedulermetrics.SchedulerQueueIncomingPods.IsCreated()
}

// unschedulableReason is schedulermetrics.UnschedulableReason(plugin, profile).
func unschedulableReason(plugin, profile string) metrics.GaugeMetric {
	return unschedulableReasons.get([3]string{plugin, profile}, func() metrics.GaugeMetric {
		return schedulermetrics.UnschedulableReason(plugin, profile)
	})
}

// incomingPod is schedulermetrics.SchedulerQueueIncomingPods.WithLabelValues(queue, event).
func incomingPod(queue, event string) metrics.CounterMetric {
	return incomingPods.get([3]string{queue, event}, func() metrics.CounterMetric {
		return schedulermetrics.SchedulerQueueIncomingPods.WithLabelValues(queue, event)
	})
}

// extensionDuration is schedulermetrics.FrameworkExtensionPointDuration.WithLabelValues(point, code, profile).
func extensionDuration(point, code, profile string) metrics.ObserverMetric {
	return extensionDurations.get([3]string{point, code, profile}, func() metrics.ObserverMetric {
		return schedulermetrics.FrameworkExtensionPointDuration.WithLabelValues(point, code, profile)
	})
}
