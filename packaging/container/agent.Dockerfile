# svc-agent image. Build from the repository root:
#   docker build -f packaging/container/agent.Dockerfile -t svc-agent .
# Runs as root on purpose: in Kubernetes it reads root-owned node logs with only
# DAC_READ_SEARCH (installer/kubernetes/agent/daemonset.yaml explains why).

ARG NODE_IMAGE=node:22-bookworm-slim

# Build: npm ci installs the pinned Bun (package.json devDependencies), then the
# repository's own build script compiles agent/main.ts into one binary.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN mkdir -p /out && bash scripts/build-agent.sh --outfile /out/svc-agent

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /etc/svc-agent
COPY --from=build /out/svc-agent /usr/local/bin/svc-agent
USER 0:0
# The config is mounted at /etc/svc-agent/config.yaml (a Secret in Kubernetes);
# the CMD is the default argument list, so `docker run IMAGE validate --config …` works too.
ENTRYPOINT ["/usr/local/bin/svc-agent"]
CMD ["--config", "/etc/svc-agent/config.yaml"]
