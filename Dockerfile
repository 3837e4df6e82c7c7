# The origin payment service and the gateway simulator, in one image.
#
#   docker build -t payments-origin .        (or: podman build --format docker -t payments-origin .)
#   docker run … payments-origin             `origin serve`
#   docker run … payments-origin user add demo     any other `origin` command
#   docker run --entrypoint gateway-sim …    the simulator
#
# The build context is the whole workspace: Cargo needs every member of the workspace
# (Cargo.toml `[workspace] members`, among them workspace-hack/, which the origin and the
# simulator depend on) to load it, even to build two of its packages. .dockerignore keeps
# target/, node_modules/, data/ and .dev.vars out. Configuration and secrets come from the
# environment at run time, never from the image (docs/deploy.md, deploy/compose.yaml).

# The toolchain the project is built and tested with (`rustc --version`: 1.95.0;
# Cargo.toml's rust-version is the oldest it accepts, 1.91).
FROM docker.io/library/rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Dependencies are cached between builds in cache mounts (the registry and target/),
# so a change to the sources recompiles only the workspace's own crates. target/ is a
# cache mount, not a layer: the binaries are copied out of it in the same step.
RUN --mount=type=cache,target=/usr/local/cargo/registry,sharing=locked \
    --mount=type=cache,target=/src/target,sharing=locked \
    cargo build --release --locked -p origin -p gateway-sim \
    && install -D -m 0755 -t /out target/release/origin target/release/gateway-sim

# The runtime: both binaries need only glibc, libm and libgcc_s (`ldd`; SQLite is
# compiled in by libsqlite3-sys). curl is for the HEALTHCHECK; ca-certificates for
# TLS to the PG, the edge and the merchant.
FROM docker.io/library/debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/*
RUN useradd --system --uid 10001 --user-group --create-home --home-dir /var/lib/origin origin
COPY --from=build /out/origin /out/gateway-sim /usr/local/bin/
USER origin
# With the default DATABASE_URL (sqlite://data/origin.sqlite3), the database is under
# /var/lib/origin/data: mount a volume there. Several instances need PostgreSQL.
WORKDIR /var/lib/origin
# Inside a container every listener binds all interfaces; which of them are published
# is the runtime's choice (deploy/compose.yaml publishes the operator listener on the
# host's loopback only).
ENV ORIGIN_LISTEN=0.0.0.0:8080 \
    ORIGIN_ADMIN_LISTEN=0.0.0.0:8081 \
    ORIGIN_METRICS_LISTEN=0.0.0.0:9090 \
    GATEWAY_SIM_LISTEN=0.0.0.0:8090 \
    LOG_FORMAT=json
# API (edge and PG webhooks), operator routes, metrics.
EXPOSE 8080 8081 9090
# /readyz answers 200 while the recovery loop completes its cycles, 503 NOT_READY once
# it has not for three intervals and two minutes. (Podman keeps HEALTHCHECK only in the
# docker image format: `podman build --format docker`.)
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
    CMD curl -fsS -o /dev/null "http://127.0.0.1:${ORIGIN_LISTEN##*:}/readyz" || exit 1
ENTRYPOINT ["origin"]
CMD ["serve"]
