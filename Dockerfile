# syntax=docker/dockerfile:1
# hindsight image: compiled in the Rust image, run from a slim Debian as a non-root user.
# Build: docker build -t hindsight .     Run: see compose.yaml and docs/deployment.md.

FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
# Cache the registry and target dir between builds (BuildKit); copy the binary out of the cache.
# The image's binary carries no line tables or symbols (the release profile keeps line tables
# for local builds' backtraces: 680 MB with them, 79 MB stripped, measured 2026-12-02).
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=symbols \
    cargo build --release --locked -p hindsight && cp target/release/hindsight /hindsight

FROM debian:bookworm-slim
# ca-certificates: TLS to hosted embedding / LLM endpoints and Qdrant Cloud.
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin hindsight \
    && mkdir -p /data && chown hindsight /data
COPY --from=build /hindsight /usr/local/bin/hindsight
# The local embedding model, pulled into the image's hub cache at build time (each file checked
# against the hub's SHA-256), so `embedder = "auto"` gives a new data set semantic search
# without reaching the hub at run time. Another model: --build-arg EMBED_MODEL=BAAI/bge-small-en-v1.5
# and HINDSIGHT_EMBED_MODEL to match.
ARG EMBED_MODEL=sentence-transformers/all-MiniLM-L6-v2
ENV HF_HOME=/opt/huggingface
RUN hindsight models pull "$EMBED_MODEL" && chmod -R a+rX /opt/huggingface
# Default job schedules and thresholds; mount your own directory over it to change them.
COPY jobs /etc/hindsight/jobs
# The distill prompt (the binary has the same one built in); mount your own to change it.
COPY prompts /etc/hindsight/prompts
USER 10001
# Listening beyond loopback requires HINDSIGHT_AUTH_TOKEN (the daemon refuses to start without).
ENV HINDSIGHT_DATA_DIR=/data \
    HINDSIGHT_JOBS_DIR=/etc/hindsight/jobs \
    HINDSIGHT_PROMPTS_DIR=/etc/hindsight/prompts \
    HINDSIGHT_LISTEN=0.0.0.0:8765 \
    HINDSIGHT_LOG_FORMAT=json
VOLUME ["/data"]
EXPOSE 8765
# `hindsight healthcheck` GETs /healthz on HINDSIGHT_LISTEN: no curl in the image.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["hindsight", "healthcheck"]
ENTRYPOINT ["hindsight"]
CMD ["serve"]
