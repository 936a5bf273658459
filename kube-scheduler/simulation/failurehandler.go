package simulation

// Failure handler: the simulation build's is upstream's handleSchedulingFailure (v1.34, schedule_one.go), copied,
// less two copies of the pod that change nothing.
//
// After each failed attempt upstream's handler reads the pod from the informer's cache and puts a deep copy of it,
// in a new PodInfo, back in the queue; then it deep-copies the pod's status to see whether its PodScheduled
// condition changes. On a saturated cluster nearly every attempt fails, and those copies were about a tenth of the
// scheduler's CPU. This handler:
//   - keeps the pod's PodInfo when the informer's pod is the attempt's pod, the same object: the queue holds the
//     informer's pod from its Add (and each Update) until upstream's handler puts a copy in its place, and nothing
//     in the scheduler writes a queued pod (the scheduling cycle assumes a copy), so the copy has the same content
//     and the PodInfo made from it the same fields. When the informer has a newer pod, or the attempt's pod is
//     the cycle's assumed copy (a failure after Reserve, or in the binding cycle), it is copied as upstream;
//   - sees whether the PodScheduled condition changes without copying the status, by upstream's own rule
//     (podutil.UpdatePodCondition: same status, reason, message and probe time; the transition time is kept when
//     the status is the same), and patches nothing then, as upstream; otherwise it runs upstream's updatePod;
//   - makes updatePod's -v=3 log line's values only when that line is written;
//   - takes the message of a failure answered from the cache of failed attempts (failures.go) as made once for
//     that answer: the same text (FitError.Error() of the same node count and messages).
//
// It reads the pod lister once (every profile's framework has the scheduler's informer factory). Everything else
// is upstream's, in upstream's order: metrics, logs, the queue's requeue (AddUnschedulableIfNotPresent
// with the same unschedulable plugins), the nomination, the event and the status patch. It applies to every profile
// and every pod. --requeue-without-copies=false turns it off (upstream's handler).

import (
	"context"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util"
)

// failureHandler is upstream's handleSchedulingFailure for sched, without the copies described above.
type failureHandler struct {
	sched  *scheduler.Scheduler
	client clientset.Interface
	pods   corelisters.PodLister
	kept   atomic.Int64 // PodInfos kept instead of made again from a copy
	// messages gives the message of a FitError answered from the cache of failed attempts (failures.go), made once
	// per answer; nil without that cache.
	messages interface {
		message(err error) (string, bool)
	}
}

// attachFailureHandler makes sched's FailureHandler the build's; client and factory are the ones given to
// scheduler.New, which gives every profile's framework that factory: the pod lister is read from it once, not
// at every failure through fw.SharedInformerFactory() (the same lister).
func attachFailureHandler(sched *scheduler.Scheduler, client clientset.Interface,
	factory informers.SharedInformerFactory) *failureHandler {
	h := &failureHandler{sched: sched, client: client, pods: factory.Core().V1().Pods().Lister()}
	sched.FailureHandler = h.handle
	return h
}

// handle is handleSchedulingFailure (v1.34.4, pkg/scheduler/schedule_one.go), changed where marked.
func (h *failureHandler) handle(ctx context.Context, fw framework.Framework, podInfo *framework.QueuedPodInfo,
	status *fwk.Status, nominatingInfo *framework.NominatingInfo, start time.Time) {
	sched := h.sched
	calledDone := false
	defer func() {
		if !calledDone {
			sched.SchedulingQueue.Done(podInfo.Pod.UID)
		}
	}()

	logger := klog.FromContext(ctx)
	reason := v1.PodReasonSchedulerError
	if status.IsRejected() {
		reason = v1.PodReasonUnschedulable
	}

	switch reason {
	case v1.PodReasonUnschedulable:
		metrics.PodUnschedulable(fw.ProfileName(), metrics.SinceInSeconds(start))
	case v1.PodReasonSchedulerError:
		metrics.PodScheduleError(fw.ProfileName(), metrics.SinceInSeconds(start))
	}

	pod := podInfo.Pod
	err := status.AsError()
	// Changed: the message of a failure answered from the cache of failed attempts is made once per answer.
	errMsg, ok := "", false
	if h.messages != nil {
		errMsg, ok = h.messages.message(err)
	}
	if !ok {
		errMsg = status.Message()
	}

	if err == scheduler.ErrNoNodesAvailable {
		logger.V(2).Info("Unable to schedule pod; no nodes are registered to the cluster; waiting", "pod", klog.KObj(pod))
	} else if fitError, ok := err.(*framework.FitError); ok {
		podInfo.UnschedulablePlugins = fitError.Diagnosis.UnschedulablePlugins
		podInfo.PendingPlugins = fitError.Diagnosis.PendingPlugins
		logger.V(2).Info("Unable to schedule pod; no fit; waiting", "pod", klog.KObj(pod), "err", errMsg)
	} else {
		utilruntime.HandleErrorWithContext(ctx, err, "Error scheduling pod; retrying", "pod", klog.KObj(pod))
	}

	cachedPod, e := h.pods.Pods(pod.Namespace).Get(pod.Name)
	if e != nil {
		logger.Info("Pod doesn't exist in informer cache", "pod", klog.KObj(pod), "err", e)
	} else {
		if len(cachedPod.Spec.NodeName) != 0 {
			logger.Info("Pod has been assigned to node. Abort adding it back to queue.", "pod", klog.KObj(pod), "node", cachedPod.Spec.NodeName)
		} else {
			// Changed: the PodInfo is kept when the informer's pod is the attempt's pod.
			if samePod(cachedPod, pod) {
				if kept := h.kept.Add(1); milestone(kept) {
					logger.Info("Failed pods requeued without a copy", "count", kept)
				}
			} else {
				podInfo.PodInfo, _ = framework.NewPodInfo(cachedPod.DeepCopy())
			}
			if err := sched.SchedulingQueue.AddUnschedulableIfNotPresent(logger, podInfo, sched.SchedulingQueue.SchedulingCycle()); err != nil {
				utilruntime.HandleErrorWithContext(ctx, err, "Error occurred")
			}
			calledDone = true
		}
	}

	if sched.SchedulingQueue != nil {
		sched.SchedulingQueue.AddNominatedPod(logger, podInfo.PodInfo, nominatingInfo)
	}

	if err == nil {
		return
	}

	msg := truncateMessage(errMsg)
	fw.EventRecorder().Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", msg)
	condition := &v1.PodCondition{
		Type:               v1.PodScheduled,
		ObservedGeneration: podutil.CalculatePodConditionObservedGeneration(&pod.Status, pod.Generation, v1.PodScheduled),
		Status:             v1.ConditionFalse,
		Reason:             reason,
		Message:            errMsg,
	}
	if err := updatePod(ctx, h.client, fw.APICacher(), pod, condition, nominatingInfo); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Error updating pod", "pod", klog.KObj(pod))
	}
}

// samePod: the informer's pod is the attempt's pod, the same object. (The same resourceVersion is not enough: the
// assumed pod of a failure after Reserve, or in the binding cycle, has it, and a node name.)
func samePod(cached, pod *v1.Pod) bool {
	return cached == pod
}

// conditionKept: podutil.UpdatePodCondition(status copy, condition) would return false (no change), read without
// the copy. The condition of that type is found as GetPodCondition finds it (the first); the new condition's probe
// time is zero, and its transition time is the old one's when the status is the same.
func conditionKept(status *v1.PodStatus, condition *v1.PodCondition) bool {
	_, old := podutil.GetPodCondition(status, condition.Type)
	return old != nil && condition.Status == old.Status && condition.Reason == old.Reason &&
		condition.Message == old.Message && condition.LastProbeTime.Equal(&old.LastProbeTime)
}

// truncateMessage is schedule_one.go's.
func truncateMessage(message string) string {
	limit := validation.NoteLengthLimit
	if len(message) <= limit {
		return message
	}
	suffix := " ..."
	return message[:limit-len(suffix)] + suffix
}

// updatePod is schedule_one.go's, changed where marked.
func updatePod(ctx context.Context, client clientset.Interface, apiCacher framework.APICacher, pod *v1.Pod,
	condition *v1.PodCondition, nominatingInfo *framework.NominatingInfo) error {
	if apiCacher != nil {
		_, err := apiCacher.PatchPodStatus(pod, condition, nominatingInfo)
		return err
	}
	// Changed: the log line's values are made only when it is written (-v=3 and more).
	if logger := klog.FromContext(ctx).V(3); logger.Enabled() {
		logValues := []any{"pod", klog.KObj(pod)}
		if condition != nil {
			logValues = append(logValues, "conditionType", condition.Type, "conditionStatus", condition.Status, "conditionReason", condition.Reason)
		}
		if nominatingInfo != nil {
			logValues = append(logValues, "nominatedNodeName", nominatingInfo.NominatedNodeName, "nominatingMode", nominatingInfo.Mode())
		}
		logger.Info("Updating pod condition and nominated node name", logValues...)
	}

	nnnNeedsUpdate := nominatingInfo.Mode() == framework.ModeOverride && pod.Status.NominatedNodeName != nominatingInfo.NominatedNodeName
	// Changed: no status copy when neither the condition nor the nominated node changes.
	if !nnnNeedsUpdate && condition != nil && conditionKept(&pod.Status, condition) {
		return nil
	}
	podStatusCopy := pod.Status.DeepCopy()
	podConditionNeedsUpdate := condition != nil && podutil.UpdatePodCondition(podStatusCopy, condition)
	if !podConditionNeedsUpdate && !nnnNeedsUpdate {
		return nil
	}
	if nnnNeedsUpdate {
		podStatusCopy.NominatedNodeName = nominatingInfo.NominatedNodeName
	}
	return util.PatchPodStatus(ctx, client, pod.Name, pod.Namespace, &pod.Status, podStatusCopy)
}
