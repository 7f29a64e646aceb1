# svc-server image. Build from the repository root:
#   docker build -f packaging/container/server.Dockerfile -t svc-server .
# Configured by SVC_* environment variables (or a file at /etc/svc/config.yaml);
# runs as the unprivileged user svc (uid 65532) and listens on 0.0.0.0:8080.

ARG NODE_IMAGE=node:22-bookworm-slim

# Build: npm ci installs the pinned Bun, then the same compile as `npm run build`.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN mkdir -p /out \
 && node_modules/.bin/bun build --compile --minify --sourcemap server/main.ts server/ottl/dryrun-worker.ts server/rollout/drift-worker.ts server/rollout/render-worker.ts --outfile /out/svc-server

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 65532 svc \
 && useradd --system --uid 65532 --gid svc --home-dir /data/svc --no-create-home --shell /usr/sbin/nologin svc \
 && mkdir -p /data/svc \
 && chown svc:svc /data/svc
COPY --from=build /out/svc-server /usr/local/bin/svc-server
# storage.boltPath defaults to /data/svc/state.db; the config repository sits beside it.
ENV SVC_LISTEN=0.0.0.0:8080
EXPOSE 8080
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/svc-server"]
