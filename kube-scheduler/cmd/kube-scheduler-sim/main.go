// Command kube-scheduler-sim is kube-scheduler for a simulated cluster (package simulation: the upstream
// scheduler with its per-pod backoff off), with the out-of-tree plugins registered here.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // for JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version" // for version metric registration
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"clustersim/kube-scheduler/plugins/podpacking"
	"clustersim/kube-scheduler/simulation"
)

func main() {
	command := simulation.NewCommand(
		app.WithPlugin(podpacking.Name, podpacking.New), // out-of-tree plugins: one app.WithPlugin each
	)
	os.Exit(cli.Run(command))
}
