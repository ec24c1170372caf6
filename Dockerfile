# retention-sync in a container: build with the Swift toolchain, run on slim Debian with only the
# three system libraries it links (libyaml, OpenSSL, libcurl). The Swift runtime and Foundation
# are linked statically, so the runtime image carries no toolchain.
#
#   docker build -t retention-sync .   (the release workflow pushes ghcr.io/retention-sync/retention-sync)
#   docker run --rm -p 8443:8443 -v "$PWD/serve:/serve:ro" retention-sync \
#     serve --env production --snapshot-store /serve/production-snapshot.json \
#     --root /serve/AppleRootCA-G3.cer --listen 0.0.0.0:8443 \
#     --tls-cert /serve/tls/cert.pem --tls-key /serve/tls/key.pem

ARG SWIFT_IMAGE=swift:6.3-bookworm
ARG RUNTIME_IMAGE=debian:bookworm-slim

FROM ${SWIFT_IMAGE} AS build
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends libyaml-dev libssl-dev libcurl4-openssl-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
# SwiftPM checks every declared target's directory, test targets included, before building one product.
COPY Tests ./Tests
RUN swift build -c release --static-swift-stdlib --product retention-sync \
 && install -D "$(swift build -c release --show-bin-path)/retention-sync" /out/retention-sync

FROM ${RUNTIME_IMAGE}
RUN apt-get update -qq \
 && apt-get install -y -qq --no-install-recommends libyaml-0-2 libssl3 libcurl4 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /nonexistent --shell /usr/sbin/nologin retention-sync
COPY --from=build /out/retention-sync /usr/local/bin/retention-sync
USER 10001
EXPOSE 8443
# serve drains on SIGTERM (the default stop signal) and exits 0.
ENTRYPOINT ["retention-sync"]
CMD ["--help"]
