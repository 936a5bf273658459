package simulation

import (
	"math/rand"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	podutil "k8s.io/kubernetes/pkg/api/v1/pod"
)

// conditionKept answers as podutil.UpdatePodCondition on a copy of the status (no change: false), on 5,000 random
// statuses and PodScheduled conditions drawn from few values, so that equal and unequal fields both come often.
func TestConditionKeptIsUpdatePodConditionsAnswer(t *testing.T) {
	random := rand.New(rand.NewSource(1))
	pick := func(values ...string) string { return values[random.Intn(len(values))] }
	times := []metav1.Time{{}, metav1.NewTime(time.Unix(1000, 0)), metav1.NewTime(time.Unix(2000, 0))}
	condition := func(kind v1.PodConditionType) v1.PodCondition {
		return v1.PodCondition{Type: kind, Status: v1.ConditionStatus(pick("True", "False")),
			Reason: pick("Unschedulable", "SchedulerError", ""), Message: pick("0/3 nodes are available.", "x", ""),
			LastProbeTime: times[random.Intn(len(times))], LastTransitionTime: times[random.Intn(len(times))],
			ObservedGeneration: int64(random.Intn(2))}
	}
	for i := 0; i < 5000; i++ {
		status := v1.PodStatus{}
		for n := random.Intn(4); n > 0; n-- {
			status.Conditions = append(status.Conditions,
				condition(v1.PodConditionType(pick(string(v1.PodScheduled), string(v1.PodReady)))))
		}
		update := condition(v1.PodScheduled)
		update.LastProbeTime, update.LastTransitionTime = metav1.Time{}, metav1.Time{} // as the handler makes it
		kept := conditionKept(&status, update.DeepCopy())
		changed := podutil.UpdatePodCondition(status.DeepCopy(), update.DeepCopy())
		if kept == changed {
			t.Fatalf("status %+v, condition %+v: conditionKept %v, UpdatePodCondition %v", status, update, kept, changed)
		}
	}
}
