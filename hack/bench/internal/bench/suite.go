/*
Copyright 2026 The Switchboard Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package bench is what hack/bench's suites share: the Suite each one is,
// the control plane they run on, the in-process rig (a manager and the
// webhook's routes on an instant sandbox), the binaries they start, and
// the statistics and metrics they read.
package bench

import (
	"flag"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Suite is one benchmark as hack/bench lists it, as wire.Kind is one
// controller as the manager lists it: it binds its own flags and runs
// itself.
type Suite interface {
	// Name is what -suite selects it by.
	Name() string
	// BindFlags registers the suite's flags on fs.
	BindFlags(fs *flag.FlagSet)
	// Run runs the suite on e's control plane and prints its figures.
	Run(e Env) error
}

// Checker is what a Suite implements whose flags need a check that flag
// parsing cannot make; hack/bench checks every suite's before any runs.
type Checker interface {
	Check() error
}

// Env is what every suite runs on.
type Env struct {
	// ControlPlane is the kube-apiserver and etcd (envtest): a suite that
	// starts binaries writes their kubeconfigs from it.
	ControlPlane *envtest.Environment
	// Config is the control plane's, without client-side throttling, as
	// the manager's (controller-runtime's default).
	Config *rest.Config
	// Bin is the directory of the binaries (-bin).
	Bin string
	// Creators is how many clients create objects at once (-creators).
	Creators int
	// All is set when -suite all runs every suite in one process: the
	// other suites' objects are then on the API server too.
	All bool
}
