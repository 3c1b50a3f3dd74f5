# syntax=docker/dockerfile:1
# The controller image (also the backup Jobs' image: `backup …`): the esbuild bundle (scripts/bundle.ts)
# on a distroless Node 24 base.
#   docker build -t ghcr.io/kubelings/backupschedule-operator:0.3.0 .
# The e2e tests and `npm run demo` run the same bundle (build/controller.mjs) outside a container.

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY imports ./imports
COPY scripts ./scripts
RUN npx tsx scripts/bundle.ts --outfile /out/controller.mjs

# distroless: no shell, no package manager; the :nonroot tag runs as uid/gid 65532 (the Deployment's runAsUser).
FROM gcr.io/distroless/nodejs24-debian12:nonroot
WORKDIR /app
# The entry file and its chunks (the controller and the backup runner load separate chunks).
COPY --from=build --chown=65532:65532 /out/ /app/
USER 65532:65532
EXPOSE 8080 8081
# The bundle needs nothing from the file system but its own files, so readOnlyRootFilesystem holds.
# V8 flags: src/controller/node-flags.ts explains them (test/controller/node-flags.test.ts keeps them equal).
ENTRYPOINT ["/nodejs/bin/node", "--max-semi-space-size=8", "--max-old-space-size=192", "--invocation-count-for-feedback-allocation=2", "--flush-baseline-code", "/app/controller.mjs"]
