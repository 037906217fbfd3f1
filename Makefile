# Switchboard — a Kubernetes operator that runs SaaS integrations as custom resources.

# Tool versions are pinned; `make <tool>` installs them into ./bin with go install.
CONTROLLER_TOOLS_VERSION ?= v0.23.0
SETUP_ENVTEST_VERSION ?= v0.25.1
GOLANGCI_LINT_VERSION ?= v2.15.0
# versitygw is the real S3 server (posix backend) tests and the demo run.
VERSITYGW_VERSION ?= v1.8.0
# Helm renders and lints the chart in tests; ko and crane build the images
# without a Docker engine (make images).
HELM_VERSION ?= v3.22.0
KO_VERSION ?= v0.19.1
CRANE_VERSION ?= v0.21.7
# promtool checks the chart's alerting rules and runs their unit tests
# (github.com/prometheus/prometheus v0.316.0 is Prometheus 3.16.0).
PROMTOOL_VERSION ?= v0.316.0
# cosign signs and attests the release and verifies it (make release,
# make verify-release, make e2e); actionlint checks the hosted release
# workflow (make lint).
COSIGN_VERSION ?= v2.6.5
ACTIONLINT_VERSION ?= v1.7.12

# Chromium drives the browser tests (test/browser) headless. It is
# Debian's package, not a go install into ./bin: `make chromium` installs
# this version when /usr/bin/chromium is missing (as root, as CI runs).
# Debian's security archive keeps only its newest build, so once this one
# is replaced there the current one is installed, with a warning to update
# the pin.
CHROMIUM_VERSION ?= 156.0.8078.108-1~deb12u1
CHROMIUM ?= /usr/bin/chromium
# A Japanese font for the pages the browser tests read in Japanese (a
# person's phone has one; without it the screenshots show empty boxes).
JA_FONT_PACKAGE ?= fonts-ipafont-gothic=00303-23
# qemu user emulation runs the arm64 image binaries' --help on an amd64
# host (hack/check-images.sh, make release). Debian's package, pinned like
# Chromium: `make qemu` installs it when $(QEMU_AARCH64) is missing.
QEMU_PACKAGE ?= qemu-user-static=1:7.2+dfsg-7+deb12u18+b3
QEMU_AARCH64 ?= /usr/bin/qemu-aarch64-static

# The envtest control plane: kube-apiserver matches the k8s.io/* v0.37.1
# modules in go.mod; etcd is the release kube-apiserver 1.37 is tested with.
ENVTEST_K8S_VERSION ?= 1.37.1
ENVTEST_ETCD_VERSION ?= 3.6.16

LOCALBIN ?= $(shell pwd)/bin
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
SETUP_ENVTEST ?= $(LOCALBIN)/setup-envtest
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint
VERSITYGW ?= $(LOCALBIN)/versitygw
HELM ?= $(LOCALBIN)/helm
KO ?= $(LOCALBIN)/ko
CRANE ?= $(LOCALBIN)/crane
PROMTOOL ?= $(LOCALBIN)/promtool
COSIGN ?= $(LOCALBIN)/cosign
ACTIONLINT ?= $(LOCALBIN)/actionlint
# The images' tarballs (make images).
IMAGES_DIR ?= $(shell pwd)/dist/images

GO_TEST_FLAGS ?= -race -count=1 -v
# The chart tests (test/chart) run $(HELM) and $(PROMTOOL).
export ENVTEST_K8S_VERSION ENVTEST_ETCD_VERSION HELM PROMTOOL
# The browser tests (test/browser) run $(CHROMIUM).
export CHROMIUM

# Setting SHELL to bash allows bash commands to be executed by recipes.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Display this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate CRDs and RBAC from the API types and markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd:allowDangerousTypes=false paths="./..." output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run go fmt.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: golangci-lint actionlint ## Run golangci-lint, and actionlint on the release workflow (.github/workflows).
	$(GOLANGCI_LINT) run
	$(ACTIONLINT)

.PHONY: envtest
envtest: setup-envtest ## Obtain kube-apiserver and etcd for tests (cached in the user's cache directory).
	@SETUP_ENVTEST=$(SETUP_ENVTEST) ./hack/envtest.sh >/dev/null

.PHONY: chart
chart: manifests helm ## Copy the CRDs and RBAC rules into charts/switchboard and regenerate its values table.
	go run ./hack/chartgen

.PHONY: test
test: manifests generate vet envtest versitygw helm promtool chromium ## Run all tests against a real kube-apiserver and etcd.
	KUBEBUILDER_ASSETS="$$(SETUP_ENVTEST=$(SETUP_ENVTEST) ./hack/envtest.sh)" go test $(GO_TEST_FLAGS) ./...

.PHONY: verify
verify: manifests generate chart ## Fail if generated files (API, config, chart) are out of date or Go files are not gofmt-ed.
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then \
		echo "not gofmt-ed: $$unformatted"; exit 1; fi
	@if [ -n "$$(git status --porcelain -- api config)" ]; then \
		git status --porcelain -- api config; git diff --stat -- api config; \
		echo "generated files are stale: run 'make manifests generate' and commit"; exit 1; fi
	@if [ -n "$$(git status --porcelain -- charts)" ]; then \
		git status --porcelain -- charts; git diff --stat -- charts; \
		echo "the chart is stale: run 'make chart' and commit"; exit 1; fi

##@ Build

.PHONY: build
build: generate ## Build the manager, webhook and sandbox binaries and the kubectl plugin (kubectl-switchboard) into ./bin.
	go build -o $(LOCALBIN)/manager ./cmd/manager
	go build -o $(LOCALBIN)/webhook ./cmd/webhook
	go build -o $(LOCALBIN)/sandbox ./cmd/sandbox
	CGO_ENABLED=0 go build -trimpath -ldflags "-X main.version=$(PLUGIN_VERSION)" -o $(LOCALBIN)/kubectl-switchboard ./cmd/kubectl-switchboard

.PHONY: run
run: manifests generate ## Run the manager against the cluster in ~/.kube/config.
	go run ./cmd/manager

.PHONY: demo
demo: manifests build envtest versitygw helm ## Run the whole system locally: control plane, sandbox, manager, webhook, samples (KEEP=1 keeps it running).
	KUBEBUILDER_ASSETS="$$(SETUP_ENVTEST=$(SETUP_ENVTEST) ./hack/envtest.sh)" go run ./hack/demo --bin $(LOCALBIN)

.PHONY: bench
bench: manifests build envtest versitygw ## Benchmarks, each against a baseline in the same run: SlideStock, Notion webhook, PaperSync, CalendarWatch, Sheets ingest, ReceiveLink resolve and expiry, token refreshes, memory, shards (BENCH_FLAGS=-suite NAME for one).
	KUBEBUILDER_ASSETS="$$(SETUP_ENVTEST=$(SETUP_ENVTEST) ./hack/envtest.sh)" go run ./hack/bench --bin $(LOCALBIN) $(BENCH_FLAGS)

# The kubectl plugin's version: the tag, or v0.0.0-g<commit> between tags
# (krew wants a semantic version). Its release (docs/cli.md) is one
# tarball a platform, their checksums and the krew manifest; the tarballs
# are dated by the commit, so the same commit makes the same bytes.
PLUGIN_VERSION ?= $(shell git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null || echo v0.0.0-g$$(git rev-parse --short HEAD))
RELEASE_DIR ?= $(shell pwd)/dist/release

# release builds everything a platform team receives, in this order (docs/release.md):
# the plugin's tarballs with their SBOMs and krew manifest; the images, one
# index of linux/amd64 and linux/arm64 per binary, with their SBOMs; the
# images' checks (each platform's binary of its architecture, the arm64 one
# run under qemu); the chart; then signatures, attestations and checksums.
RELEASE_PLATFORMS ?= linux/amd64,linux/arm64

.PHONY: release
release: ko crane cosign helm qemu | $(LOCALBIN) ## Build the release into dist/release: plugin tarballs, multi-arch image indexes, SBOMs, chart, signatures, provenance, checksums, krew manifest.
	rm -rf $(RELEASE_DIR)
	SOURCE_DATE_EPOCH=$$(git log -1 --format=%ct) go run ./hack/release --version $(PLUGIN_VERSION) --out $(RELEASE_DIR)
	KO=$(KO) CRANE=$(CRANE) OUT=$(RELEASE_DIR)/images SBOM_OUT=$(RELEASE_DIR)/sbom PLATFORMS=$(RELEASE_PLATFORMS) ./hack/images.sh
	CRANE=$(CRANE) DIR=$(RELEASE_DIR)/images SBOM_DIR=$(RELEASE_DIR)/sbom PLATFORMS=$(RELEASE_PLATFORMS) CLI_DIR=$(RELEASE_DIR) QEMU_AARCH64=$(QEMU_AARCH64) ./hack/check-images.sh
	COSIGN=$(COSIGN) CRANE=$(CRANE) HELM=$(HELM) RELEASE_DIR=$(RELEASE_DIR) ./hack/sign-release.sh

# verify-release verifies $(RELEASE_DIR) as a platform team would
# (docs/release.md, "Verifying a release"): it loads the signed images and
# chart into a registry on loopback, checks every signature, attestation
# and provenance subject and runs every command of digests.txt, then
# checks that a wrong key, a re-tagged image, a changed chart and a changed
# tarball each fail. It fails when there is no release: run make release.
.PHONY: verify-release
verify-release: cosign crane helm ## Verify dist/release: every signature, attestation and checksum, and that each tampered case fails.
	COSIGN=$(COSIGN) CRANE=$(CRANE) go test ./test/release -count=1 -v -args -release-dir $(RELEASE_DIR)

# images builds OCI image tarballs of the manager and the webhook with no
# Docker engine and no registry, for this machine's platform, with their
# SBOMs in dist/sbom: see hack/images.sh (make release builds both
# platforms with the same script).
.PHONY: images
images: ko crane | $(LOCALBIN) ## Build OCI image tarballs (an index of this machine's platform) of the manager and webhook into dist/images, SBOMs into dist/sbom (no Docker needed).
	KO=$(KO) CRANE=$(CRANE) OUT=$(IMAGES_DIR) ./hack/images.sh

# e2e brings up a real single-node Kubernetes on this machine (no Docker,
# no registry), helm-installs the chart into it, walks every kind through
# the webhook Service, upgrades, kills the leader, evicts a webhook pod and
# reinstalls under load, and tears it all down, proving the host is as
# before (docs/e2e.md). Root only; one run per machine at a time.
E2E_DIR ?= /var/tmp/switchboard-e2e
E2E_PAUSE ?= $(shell pwd)/dist/e2e/pause.tar
# The previous release the e2e installs first and upgrades from: the last
# landed commit before NotionSignup (docs/e2e.md). Move it forward when a
# release is cut.
E2E_PREVIOUS ?= 6320d60f0590e3b93fd7d90aa654a16da48a0be7

.PHONY: e2e
e2e: build envtest versitygw helm ko crane cosign ## Run the release (make release first) on a real single-node Kubernetes built here: the previous release under Pod Security restricted, every kind, the upgrade to the signed chart, leader loss, pod eviction, reinstall (KEEP=1 keeps it running).
	./hack/e2e/host-deps.sh
	CRANE=$(CRANE) ./hack/e2e/pause-image.sh $(E2E_PAUSE)
	go run ./hack/e2e --work $(E2E_DIR) --bin $(LOCALBIN) --release $(RELEASE_DIR) --pause $(E2E_PAUSE) \
		--previous "$$(KO=$(KO) CRANE=$(CRANE) ./hack/e2e/previous-release.sh $(E2E_PREVIOUS))" \
		--control-plane "$$(SETUP_ENVTEST=$(SETUP_ENVTEST) ./hack/envtest.sh)" --node "$$(./hack/envtest.sh node)"

.PHONY: e2e-down
e2e-down: ## Tear down what a killed make e2e left on the host, and check the host is as before.
	go run ./hack/e2e --work $(E2E_DIR) --node "$$(./hack/envtest.sh node)" down

##@ Dependencies

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

.PHONY: chromium
chromium: ## Install Debian's Chromium and a Japanese font for the browser tests (root; nothing to do when both are there).
	@if [ -x "$(CHROMIUM)" ] && fc-list :lang=ja 2>/dev/null | grep -q .; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then echo "$(CHROMIUM) or a Japanese font is missing: as root, run make chromium (Debian's chromium and $(JA_FONT_PACKAGE))" >&2; exit 1; fi; \
	apt-get update -qq; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$(JA_FONT_PACKAGE)" fontconfig; \
	if [ -x "$(CHROMIUM)" ]; then exit 0; fi; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "chromium=$(CHROMIUM_VERSION)" || { \
		echo "warning: chromium $(CHROMIUM_VERSION) is no longer in the archive; installing the current one (update CHROMIUM_VERSION)" >&2; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; }; \
	"$(CHROMIUM)" --version

.PHONY: qemu
qemu: ## Install Debian's qemu-user-static, which runs the arm64 images' binaries in the release checks (root; nothing to do when it is there).
	@if [ -x "$(QEMU_AARCH64)" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then echo "$(QEMU_AARCH64) is missing: as root, run make qemu (Debian's $(QEMU_PACKAGE))" >&2; exit 1; fi; \
	apt-get update -qq; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$(QEMU_PACKAGE)" || { \
		echo "warning: $(QEMU_PACKAGE) is no longer in the archive; installing the current qemu-user-static (update QEMU_PACKAGE)" >&2; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends qemu-user-static; }; \
	"$(QEMU_AARCH64)" --version

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen into ./bin.
$(CONTROLLER_GEN): | $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

.PHONY: setup-envtest
setup-envtest: $(SETUP_ENVTEST) ## Install setup-envtest into ./bin.
$(SETUP_ENVTEST): | $(LOCALBIN)
	$(call go-install-tool,$(SETUP_ENVTEST),sigs.k8s.io/controller-runtime/tools/setup-envtest,$(SETUP_ENVTEST_VERSION))

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Install golangci-lint into ./bin.
$(GOLANGCI_LINT): | $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

# versitygw takes about a minute to build, so hack/tool.sh builds it once
# into the user's cache directory and ./bin links to that build.
.PHONY: versitygw
versitygw: | $(LOCALBIN) ## Install versitygw (the S3 server of tests and the demo) into ./bin.
	@path=$$(./hack/tool.sh versitygw github.com/versity/versitygw/cmd/versitygw $(VERSITYGW_VERSION)) && ln -sf "$$path" $(VERSITYGW)

# helm, ko and crane are built once into the user's cache, like versitygw.
# helm is stamped, as helm's own release build is, with the Kubernetes
# version it assumes when no cluster is asked (helm template, helm lint):
# a plain go install assumes v1.20.0, below the chart's kubeVersion. The
# version is the one the tests run.
HELM_K8S_MINOR = $(word 2,$(subst ., ,$(ENVTEST_K8S_VERSION)))
HELM_LDFLAGS = $(foreach p,pkg/chartutil pkg/lint/rules,-X helm.sh/helm/v3/$(p).k8sVersionMajor=1 -X helm.sh/helm/v3/$(p).k8sVersionMinor=$(HELM_K8S_MINOR))

.PHONY: helm
helm: | $(LOCALBIN) ## Install helm (renders and lints the chart in tests) into ./bin.
	@path=$$(TOOL_LDFLAGS="$(HELM_LDFLAGS)" ./hack/tool.sh helm helm.sh/helm/v3/cmd/helm $(HELM_VERSION)) && ln -sf "$$path" $(HELM)

.PHONY: cosign
cosign: | $(LOCALBIN) ## Install cosign (signs, attests and verifies the release) into ./bin.
	@path=$$(./hack/tool.sh cosign github.com/sigstore/cosign/v2/cmd/cosign $(COSIGN_VERSION)) && ln -sf "$$path" $(COSIGN)

.PHONY: actionlint
actionlint: | $(LOCALBIN) ## Install actionlint (checks the release workflow) into ./bin.
	@path=$$(./hack/tool.sh actionlint github.com/rhysd/actionlint/cmd/actionlint $(ACTIONLINT_VERSION)) && ln -sf "$$path" $(ACTIONLINT)

.PHONY: promtool
promtool: | $(LOCALBIN) ## Install promtool (checks and unit-tests the chart's alerts) into ./bin.
	@path=$$(./hack/tool.sh promtool github.com/prometheus/prometheus/cmd/promtool $(PROMTOOL_VERSION)) && ln -sf "$$path" $(PROMTOOL)

.PHONY: ko
ko: | $(LOCALBIN) ## Install ko (builds the images) into ./bin.
	@path=$$(./hack/tool.sh ko github.com/google/ko $(KO_VERSION)) && ln -sf "$$path" $(KO)

.PHONY: crane
crane: | $(LOCALBIN) ## Install crane (the images' base, local registry and checks) into ./bin.
	@path=$$(./hack/tool.sh crane github.com/google/go-containerregistry/cmd/crane $(CRANE_VERSION)) && ln -sf "$$path" $(CRANE)

# go-install-tool installs a pinned tool as bin/<name>-<version> and links
# bin/<name> to it, so that bumping a version reinstalls.
# $1 target path, $2 package, $3 version
define go-install-tool
@[ -f "$(1)-$(3)" ] || { \
set -e; \
echo "Installing $(2)@$(3)"; \
rm -f $(1) || true; \
GOBIN=$(LOCALBIN) go install $(2)@$(3); \
mv $(1) $(1)-$(3); \
}; \
ln -sf $(1)-$(3) $(1)
endef
