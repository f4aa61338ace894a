# Mishap in a container: a release build with the Swift runtime linked in, on a slim Debian that
# has only libmicrohttpd, libyaml and libcurl added. `make image-check` proves the runtime stage without
# Docker: it builds the binary the same way, checks with ldd what it needs, serves from a
# folder outside the source tree, runs the HEALTHCHECK below against servers on other ports and
# on HTTPS only, and checks .dockerignore and the README's account of this file.
#
#   docker build -t mishap .
#   docker run --rm -p 8080:8080 mishap
#   docker run --rm -p 8080:8080 -v "$PWD/scenarios:/scenarios:ro" mishap     # your scenarios

FROM swift:6.3-bookworm AS build
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libmicrohttpd-dev libgnutls28-dev libyaml-dev libcurl4-gnutls-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY Tests ./Tests
# The flags of `make release` (the Swift runtime linked in, a non-PIE executable), from the file
# that holds them for the Makefile too.
COPY scripts/release-flags ./
RUN swift build $(cat release-flags) --product mishap \
 && cp "$(swift build $(cat release-flags) --show-bin-path)/mishap" /usr/local/bin/mishap

FROM debian:bookworm-slim
# libmicrohttpd12 brings its own dependencies (GnuTLS, which mishap also calls for its
# certificates); libyaml-0-2 has none; libcurl3-gnutls (GnuTLS too) is loaded only with --upstream;
# glibc, libstdc++ and libgcc are in the base image.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libmicrohttpd12 libyaml-0-2 libcurl3-gnutls \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin mishap
COPY --from=build /usr/local/bin/mishap /usr/local/bin/mishap
COPY scenarios /scenarios
# The local certificate authority for --tls-port: mount a folder here to keep it (and the pin)
# across containers; otherwise it is made inside the container on first use. The pid file: every
# `mishap serve` writes its pid and URL there, whatever port or flags it is given, which is how
# the health check finds it (as `mishap state` and `mishap force` run in the container do).
ENV MISHAP_TLS_DIR=/tls MISHAP_PID_FILE=/tmp/mishap.pid
RUN mkdir /tls && chown mishap /tls && chmod 700 /tls
USER mishap
EXPOSE 8080 8443
# Asks the server the pid file names, on its own URL (HTTPS only with --port off, trusting the CA
# in /tls): healthy while it answers there.
HEALTHCHECK --interval=10s --timeout=3s --start-period=2s \
  CMD ["mishap", "status"]
ENTRYPOINT ["mishap"]
CMD ["serve", "--scenarios", "/scenarios", "--host", "0.0.0.0", "--port", "8080"]
