# syntax=docker/dockerfile:1
# For people who have Docker (or BuildKit, Podman, Buildah). Without a
# Docker engine, `make images` builds the same two images with ko and crane.
#
#   docker build --target manager -t switchboard/manager:0.1.0 .
#   docker build --target webhook -t switchboard/webhook:0.1.0 .
#
# Both images are the static binary on distroless/static (CA certificates,
# /etc/passwd with nonroot, /tmp; no shell), run as uid 65532.

ARG GO_VERSION=1.26
FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
ARG TARGETOS=linux
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY internal/ internal/
# Static binaries: no cgo, no libc, nothing to find at run time.
ENV CGO_ENABLED=0
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags=-s -o /out/manager ./cmd/manager && \
    GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags=-s -o /out/webhook ./cmd/webhook

FROM gcr.io/distroless/static-debian12:nonroot AS manager
COPY --from=build /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]

FROM gcr.io/distroless/static-debian12:nonroot AS webhook
COPY --from=build /out/webhook /webhook
USER 65532:65532
ENTRYPOINT ["/webhook"]
