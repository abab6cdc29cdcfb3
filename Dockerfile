# Multi-stage build: compile in the Rust image, run in a slim Debian with a non-root user.
# (The scale-out issue extends this with PostgreSQL/Qdrant settings and static checks.)
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked && cp target/release/hindsight /hindsight

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home /data hindsight \
    && mkdir -p /data && chown hindsight /data
COPY --from=build /hindsight /usr/local/bin/hindsight
USER hindsight
ENV HINDSIGHT_DATA_DIR=/data HINDSIGHT_LISTEN=0.0.0.0:8765
VOLUME ["/data"]
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
    CMD curl -fsS http://127.0.0.1:8765/healthz || exit 1
ENTRYPOINT ["hindsight"]
CMD ["serve"]
