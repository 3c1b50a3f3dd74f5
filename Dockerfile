# syntax=docker/dockerfile:1
# The operator image (controller, conversion webhook, `backup` runner, `migrate-storage`) where a container
# daemon exists. It holds the same files `npm run image` packs without one (scripts/image/: the Debian
# packages pinned in image.lock.json, the Node binary of the `node` devDependency, the esbuild bundle),
# copied onto scratch; entrypoint, user, working directory, environment, ports and labels are those of
# scripts/image/image-spec.ts (test/image/dockerfile.test.ts holds them equal). docs/image.md compares
# the two ways; the released image is the daemonless one (`npm run release`).
#
#   docker build -t ghcr.io/kubelings/backupschedule-operator:0.3.0 \
#     --build-arg REVISION=$(git rev-parse HEAD) --build-arg SOURCE_DATE_EPOCH=$(git log -1 --format=%ct) \
#     --build-arg CREATED=$(TZ=UTC git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd) .

FROM node:24-bookworm-slim AS build
WORKDIR /src
# Dependencies first, without their scripts: `prepare` builds the npm package from sources not copied
# yet. The one script the image needs is the `node` package's, which installs the Node binary it ships.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts && npm rebuild node
COPY tsconfig.json ./
COPY src ./src
COPY imports ./imports
COPY scripts ./scripts
ARG REVISION
ARG SOURCE_DATE_EPOCH
# apt-get update: the pinned packages are fetched with `apt-get download`.
RUN apt-get update && npm run image -- --rootfs /rootfs --revision "$REVISION"

FROM scratch
COPY --from=build /rootfs/ /
USER 65532:65532
WORKDIR /app
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
EXPOSE 8080 8081 9443
ARG REVISION
ARG CREATED
LABEL org.opencontainers.image.created=$CREATED \
      org.opencontainers.image.description="BackupSchedule operator: the controller, its conversion webhook, the backup runner and migrate-storage" \
      org.opencontainers.image.licenses=Apache-2.0 \
      org.opencontainers.image.revision=$REVISION \
      org.opencontainers.image.source=https://github.com/kubelings/backupschedule-operator \
      org.opencontainers.image.title=backupschedule-operator \
      org.opencontainers.image.version=0.3.0
# The bundle needs nothing from the file system but its own files, so readOnlyRootFilesystem holds.
# V8 flags: src/controller/node-flags.ts explains them (test/controller/node-flags.test.ts keeps them equal).
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=8", "--max-old-space-size=192", "--invocation-count-for-feedback-allocation=2", "--flush-baseline-code", "/app/controller.mjs"]
