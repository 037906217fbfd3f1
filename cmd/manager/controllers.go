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

package main

import (
	"github.com/switchboard-dev/switchboard/internal/controller/calendarwatch"
	"github.com/switchboard-dev/switchboard/internal/controller/notionintegration"
	"github.com/switchboard-dev/switchboard/internal/controller/papersync"
	"github.com/switchboard-dev/switchboard/internal/controller/receivelink"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetconnection"
	"github.com/switchboard-dev/switchboard/internal/controller/sheetsync"
	"github.com/switchboard-dev/switchboard/internal/controller/slidestock"
	"github.com/switchboard-dev/switchboard/internal/controller/wire"
)

// kinds lists every controller the manager runs, one line a kind. A child
// kind's controller posts to its parent's mailbox, so the two share it.
func kinds() []wire.Kind {
	notion, sheets := &notionintegration.Reports{}, &sheetconnection.Reports{}
	return []wire.Kind{
		&slidestock.Controller{},
		&notionintegration.Controller{Reports: notion},
		&papersync.Controller{Integrations: notion},
		&calendarwatch.Controller{},
		&receivelink.Controller{Namespace: podNamespace()},
		&sheetconnection.Controller{Reports: sheets},
		&sheetsync.Controller{Connections: sheets},
	}
}
