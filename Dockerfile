# The two images the Helm charts run (helm/): grus-api with the built portal, and grus-agent with
# the CUDA limiter library.
#   docker build --target api   -t ghcr.io/grus/grus-api:0.1.0 .
#   docker build --target agent -t ghcr.io/grus/grus-agent:0.1.0 .
# Paths here are the charts' defaults (portal.dir, node.limiter.imagePath); the binaries run as
# uid 65532 except the node daemon (the chart sets root for the kubelet's socket directory).

FROM node:20-bookworm-slim AS portal
WORKDIR /src/portal
COPY portal/package.json portal/package-lock.json ./
RUN npm install --no-audit --no-fund
COPY portal/ ./
COPY api/schema.graphql /src/api/schema.graphql
RUN npm run build

FROM rust:1-bookworm AS rust
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p grus-api -p grus-agent -p grus-cuda-limiter

FROM debian:bookworm-slim AS api
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=rust /src/target/release/grus-api /usr/local/bin/grus-api
COPY --from=portal /src/portal/dist /usr/share/grus/portal
USER 65532:65532
ENTRYPOINT ["grus-api"]
CMD ["serve", "--listen", "0.0.0.0:8080", "--portal-dir", "/usr/share/grus/portal"]

FROM debian:bookworm-slim AS agent
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=rust /src/target/release/grus-agent /usr/local/bin/grus-agent
COPY --from=rust /src/target/release/libgrus_cuda_limiter.so /usr/local/lib/grus/libgrus_cuda_limiter.so
USER 65532:65532
ENTRYPOINT ["grus-agent"]
