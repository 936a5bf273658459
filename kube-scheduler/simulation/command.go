// Package simulation builds kube-scheduler for a simulated cluster: the upstream scheduler, its flags, its
// KubeSchedulerConfiguration file and every default plugin, made through the scheduler's own Go API exactly as
// k8s.io/kubernetes/cmd/kube-scheduler/app does, with these differences, each for simulated time:
//
//   - the per-pod backoff is off (scheduler.WithPodMaxBackoffSeconds(0), which the scheduling queue reads as
//     "backoff disabled"): the backoff runs on the wall clock, and in a simulation wall time is not simulated
//     time; a pod that failed is retried as soon as a cluster event may make it schedulable, in the queue's own
//     order. The configuration file cannot say this (its validation requires podInitialBackoffSeconds > 0);
//   - it takes each simulated instant whole and reports when it is done with it (idle.go): the facade then
//     moves time on exactly at the end of the scheduler's pass, never half-way through it;
//   - nodes are filtered and scored by one goroutine (scheduler.WithParallelism(1)), score ties and the
//     preemption offset are drawn from a source of the cycle's own seeded from the pod's name and attempt
//     (idle.go, ties.go; math/rand's global source too, main.go's //go:debug lines), and the pod event handlers
//     run between scheduling cycles (idle.go): the same feasible list and the same draws on every run, whatever
//     other goroutines draw;
//   - a pod's FailedScheduling event repeated at the same pod version reaches the event recorder at most once a
//     minute after the first two (events.go): the API sees the same events, their series counted less often;
//   - a failed pod's nomination is cleared without listing the pod as nominated to no node (nominator.go): the
//     same nominated pods for every node, without two scans of every waiting pod at each failure;
//   - a failed pod is put back in the queue without a deep copy when the informer's pod is the attempt's pod, and
//     its PodScheduled condition is compared without a copy of its status (failurehandler.go): the same queue,
//     the same patches;
//   - podMaxInUnschedulablePodsDuration is measured in simulated time and checked at the start of each instant
//     (timeout.go), not every 30 s of wall time by the queue's own goroutine;
//   - the scheduler's pod events carry their labels, made once (labels.go), instead of formatting them at each
//     pod the queue moves;
//   - the pending pods are held in the build's copy of upstream's scheduling queue (ownqueue.go, package queue),
//     whose heap compares pods without looking them up by key: the same pods popped in the same order;
//   - Go's garbage collector runs at GOGC=400 unless GOGC is set (main.go): it changes no decision.
package simulation

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/tools/events"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/component-base/version/verflag"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	schedulerserverconfig "k8s.io/kubernetes/cmd/kube-scheduler/app/config"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
	kubeschedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// NewCommand is app.NewSchedulerCommand for a simulated cluster: same flags, same configuration, same run, plus
// the out-of-tree plugins given (app.WithPlugin), with the per-pod backoff off.
func NewCommand(registryOptions ...app.Option) *cobra.Command {
	opts := options.NewOptions()
	var cuts shortcuts
	var widen time.Duration
	cmd := &cobra.Command{
		Use:  "kube-scheduler-sim",
		Long: "kube-scheduler for a simulated cluster: upstream kube-scheduler with its per-pod backoff off.",
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return opts.ComponentGlobalsRegistry.Set()
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd, opts, cuts, widen, registryOptions...)
		},
		Args: cobra.NoArgs,
	}
	nfs := opts.Flags
	nfs.FlagSet("simulation").BoolVar(&cuts.keepFailures, "keep-failures", true, "Answer a scheduling attempt that "+
		"failed before (same pod content, same cluster state) with the same answer, without running the "+
		"filters and the preemption dry run again (failures.go). Off: every attempt runs every plugin.")
	nfs.FlagSet("simulation").BoolVar(&cuts.noVictims, "preemption-without-victims", true, "Answer DefaultPreemption's "+
		"PostFilter without its dry run when no node it would visit holds a pod of lower priority than the pod "+
		"(preemption.go): upstream's answer, without a copy of every node. Off: upstream's dry run every time.")
	nfs.FlagSet("simulation").BoolVar(&cuts.unlisted, "clear-nominations-unlisted", true, "Clear a failed pod's "+
		"nomination without listing the pod as nominated to no node, a list nothing reads and the nominator scans "+
		"at every failure (nominator.go). Off: upstream's nominator.")
	nfs.FlagSet("simulation").BoolVar(&cuts.uncopied, "requeue-without-copies", true, "Put a failed pod back in "+
		"the queue without a deep copy of it when the informer's pod is the attempt's pod (same resourceVersion), "+
		"and see whether its PodScheduled condition changes without copying its status (failurehandler.go). "+
		"Off: upstream's failure handler.")
	nfs.FlagSet("simulation").BoolVar(&cuts.simulatedTimeout, "unschedulable-timeout-in-simulated-time", true,
		"Apply podMaxInUnschedulablePodsDuration in simulated time: at the start of each instant, the pods "+
			"unschedulable for longer than that go back to the queue, as upstream's queue does every 30 s of wall "+
			"time (timeout.go). Off: upstream's, in wall time.")
	nfs.FlagSet("simulation").BoolVar(&cuts.labelsOnce, "event-labels-once", true, "Give the scheduler's pod "+
		"events (AssignedPodDelete...) their label once, as the CustomLabel they read it from, instead of "+
		"formatting it each time the queue moves a pod (labels.go): the same labels. Off: upstream's.")
	nfs.FlagSet("simulation").BoolVar(&cuts.ownQueue, "own-queue", true, "Hold the pending pods in the build's "+
		"copy of upstream's scheduling queue, whose heap compares pods without looking them up by key and which "+
		"reads a pod's rejector plugins without making their union (ownqueue.go, package queue): the same pods "+
		"popped in the same order. Off: upstream's queue.")
	nfs.FlagSet("simulation").BoolVar(&cuts.checkQueue, "check-queue", false, "Testing only: with --own-queue, "+
		"run upstream's scheduling queue beside the build's, give both every change, and stop the scheduler if a "+
		"Pop takes another pod, or another attempt, from one than from the other (ownqueue.go).")
	nfs.FlagSet("simulation").DurationVar(&cuts.repeats, "failure-event-repeats", time.Minute, "Hand a pod's "+
		"FailedScheduling event repeated at the same pod version to the event recorder at most once this often "+
		"(wall time) after the first two, which are all the API sees of the series until the recorder's own "+
		"timers (events.go). 0: every one, as upstream.")
	nfs.FlagSet("simulation").DurationVar(&widen, "widen-races", 0, "Testing only: where the build follows the "+
		"scheduler's own goroutines (after each pod event handler, after the queue's Done), wake the scheduling "+
		"goroutine and the idle reporter and wait this long, so that the orders those goroutines can take are "+
		"taken often (idle.go). The schedule must not change.")
	nfs.FlagSet("simulation").DurationVar(&drawRaces, "draw-races", 0, "Testing only: draw from math/rand's "+
		"global source this often on a goroutine of its own, as client-go's reflectors do at each watch (ties.go). "+
		"The schedule must not change.")
	verflag.AddFlags(nfs.FlagSet("global"))
	globalflag.AddGlobalFlags(nfs.FlagSet("global"), cmd.Name(), logs.SkipLoggingConfigurationFlags())
	for _, f := range nfs.FlagSets {
		cmd.Flags().AddFlagSet(f)
	}
	cliflag.SetUsageAndHelpFunc(cmd, *nfs, 100)
	return cmd
}

// milestone: whether a shortcut's running count is one to log (1024, 2048, 4096...): the log shows it works
// without a line per use.
func milestone[T int | int64](count T) bool {
	return count >= 1024 && count&(count-1) == 0
}

// shortcuts: the flags that turn the build's exact shortcuts on or off.
type shortcuts struct {
	keepFailures, noVictims, unlisted, uncopied, simulatedTimeout, labelsOnce, ownQueue, checkQueue bool
	repeats                                                                                         time.Duration
}

func run(cmd *cobra.Command, opts *options.Options, cuts shortcuts, widen time.Duration,
	registryOptions ...app.Option) error {
	verflag.PrintAndExitIfRequested()
	fg := opts.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	if err := logsapi.ValidateAndApply(opts.Logs, fg); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	cliflag.PrintFlags(cmd.Flags())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-server.SetupSignalHandler()
		cancel()
	}()
	cc, sched, err := setup(ctx, opts, cuts, widen, registryOptions...)
	if err != nil {
		return err
	}
	if drawRaces > 0 {
		go drawFromGlobal(ctx, drawRaces)
	}
	return app.Run(ctx, cc, sched)
}

// setup is app.Setup with the backoff off: the same defaults, validation, configuration file, profiles and
// scheduler options, except scheduler.WithPodInitialBackoffSeconds(0) and WithPodMaxBackoffSeconds(0).
func setup(ctx context.Context, opts *options.Options, cuts shortcuts, widen time.Duration,
	registryOptions ...app.Option) (
	*schedulerserverconfig.CompletedConfig, *scheduler.Scheduler, error) {
	cfg, err := latest.Default()
	if err != nil {
		return nil, nil, err
	}
	opts.ComponentConfig = cfg
	if errs := opts.Validate(); len(errs) > 0 {
		return nil, nil, utilerrors.NewAggregate(errs)
	}
	c, err := opts.Config(ctx)
	if err != nil {
		return nil, nil, err
	}
	cc := c.Complete()
	registry := make(runtime.Registry)
	for _, option := range registryOptions {
		if err := option(registry); err != nil {
			return nil, nil, err
		}
	}
	recorderFactory := func(name string) events.EventRecorder {
		return newRepeatedFailures(cc.EventBroadcaster.NewRecorder(name), cuts.repeats)
	}
	if cuts.labelsOnce {
		labelEventsOnce() // before the scheduler's handlers and queue can read them
		klog.FromContext(ctx).Info("Pod event labels made once")
	}
	idle := newIdleReporter(cc.Client, widen)
	inWallTime := cc.PodMaxInUnschedulablePodsDuration
	if cuts.simulatedTimeout {
		idle.timeout = newUnschedulableTimeout(inWallTime)
		inWallTime = neverInWallTime // the queue's own goroutine then moves no pod (timeout.go)
	}
	client := idle.writes(cc.Client)            // status writes followed (idle.go)
	factory := idle.factory(cc.InformerFactory) // the same informers; the pod handlers are followed (idle.go)
	var completedProfiles []kubeschedulerconfig.KubeSchedulerProfile
	sched, err := scheduler.New(ctx,
		client,
		factory,
		cc.DynInformerFactory,
		recorderFactory,
		scheduler.WithComponentConfigVersion(cc.ComponentConfig.TypeMeta.APIVersion),
		scheduler.WithKubeConfig(cc.KubeConfig),
		scheduler.WithProfiles(cc.ComponentConfig.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cc.ComponentConfig.PercentageOfNodesToScore),
		scheduler.WithFrameworkOutOfTreeRegistry(registry),
		scheduler.WithPodMaxBackoffSeconds(0), // the only difference: no per-pod backoff
		scheduler.WithPodInitialBackoffSeconds(0),
		scheduler.WithPodMaxInUnschedulablePodsDuration(inWallTime),
		scheduler.WithExtenders(cc.ComponentConfig.Extenders...),
		scheduler.WithParallelism(1), // nodes filtered and scored in order: the same feasible list every run
		scheduler.WithBuildFrameworkCapturer(func(profile kubeschedulerconfig.KubeSchedulerProfile) {
			completedProfiles = append(completedProfiles, profile)
		}),
	)
	if err != nil {
		return nil, nil, err
	}
	if cuts.ownQueue { // before the wrappers of the queue, which then wrap this one
		attachOwnQueue(klog.FromContext(ctx), sched, factory, cc.ComponentConfig.Profiles[0].SchedulerName,
			cuts.checkQueue)
	}
	idle.attach(sched)
	go idle.run(ctx)
	var handler *failureHandler
	if cuts.uncopied {
		handler = attachFailureHandler(sched, client, factory)
	}
	if cuts.unlisted {
		attachNominator(sched)
	}
	if cuts.noVictims { // before attachFailures, which wraps the profiles
		attachPreemption(ctx, sched)
	}
	if cuts.keepFailures {
		kept := attachFailures(sched, completedProfiles, cc.InformerFactory.Core().V1().Namespaces().Lister(),
			len(cc.ComponentConfig.Extenders))
		if handler != nil {
			handler.messages = kept
		}
	}
	if err := options.LogOrWriteConfig(klog.FromContext(ctx), opts.WriteConfigTo, &cc.ComponentConfig,
		completedProfiles); err != nil {
		return nil, nil, err
	}
	return &cc, sched, nil
}
