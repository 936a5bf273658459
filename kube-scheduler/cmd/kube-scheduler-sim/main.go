// Command kube-scheduler-sim is kube-scheduler for a simulated cluster (package simulation), with the
// out-of-tree plugins registered here.
//
// math/rand's global source can be seeded (randseednop=0; Go 1.24+ ignores rand.Seed otherwise) and starts from a
// fixed seed (randautoseed=0): kube-scheduler breaks score ties with it (selectHost), and the simulation build
// seeds it at each scheduling cycle from the pod and its attempt (simulation/idle.go), so runs draw the same ties.
//
//go:debug randautoseed=0
//go:debug randseednop=0
package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // for JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version" // for version metric registration
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"clustersim/kube-scheduler/plugins/podpacking"
	"clustersim/kube-scheduler/simulation"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// Go's collector at its default (100) took a quarter of the CPU on saturated workloads, where every
		// completion sends every waiting pod through the filters: collect less often (GOGC=400), memory allowing.
		debug.SetGCPercent(400)
	}
	command := simulation.NewCommand(
		app.WithPlugin(podpacking.Name, podpacking.New), // out-of-tree plugins: one app.WithPlugin each
	)
	stop := cpuProfile(os.Getenv("CLUSTERSIM_CPUPROFILE"))
	code := cli.Run(command)
	stop()
	os.Exit(code)
}

// cpuProfile writes a CPU profile of the whole run (runtime/pprof, for `go tool pprof`) to path, if not "": where a
// scheduling attempt's time goes, with no port to open. The returned function ends it (at exit, SIGTERM included).
func cpuProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	out, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(out)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "CLUSTERSIM_CPUPROFILE=%s: %v\n", path, err)
		os.Exit(1)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := out.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "CLUSTERSIM_CPUPROFILE=%s: %v\n", path, err)
		}
	}
}
