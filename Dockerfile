# jake-bot's images. The default (the last stage, with-clis) is the bot with
# Node.js and the pinned Claude Code, Codex and Gemini CLI: it runs turns.
#   docker build -t jakebot .
# The bot alone, on distroless: a gateway whose turns all run on runners.
#   docker build --target bot -t jakebot:bot .
#
# Both run as a user of their own under tini, keep everything in the volume
# /data (HOME: the conversations' state, the CLIs' sessions and logins; the
# workdirs under /data/work), and stop a running turn on SIGTERM within
# docker stop's 10 seconds (SHUTDOWN_GRACE, SHUTDOWN_DEADLINE).

FROM golang:1.26-bookworm AS build
# An init for PID 1 (jakebot reaps orphans itself there too; tini is the
# belt to those braces). tini-static runs on distroless.
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The compiler's cache outlives the build on the builder (BuildKit, buildah).
RUN --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w" -o /out/jakebot ./cmd/jakebot \
    && mkdir -p /out/data/work

# The bot alone: bring your own CLIs (mount them, or extend this image), or
# run every turn on runners.
FROM gcr.io/distroless/static-debian12:nonroot AS bot
COPY --from=build /usr/bin/tini-static /usr/bin/tini-static
COPY --from=build /out/jakebot /usr/local/bin/jakebot
COPY --from=build --chown=65532:65532 /out/data /data
ENV HOME=/data ALLOWED_ROOTS=/data/work HEALTH_ADDR=127.0.0.1:9090 \
    SHUTDOWN_GRACE=5s SHUTDOWN_DEADLINE=4s
VOLUME /data
WORKDIR /data
USER 65532:65532
HEALTHCHECK --interval=30s --timeout=10s --start-period=10s CMD ["/usr/local/bin/jakebot", "health"]
ENTRYPOINT ["/usr/bin/tini-static", "--", "/usr/local/bin/jakebot"]

# The bot with Claude Code, Codex and Gemini CLI at the versions the tests
# pin. Qwen Code and OpenCode, pinned for the tests of the ACP mode, are
# left out (300 MB): add them with npm install -g in an image of your own.
# bubblewrap: the CLIs' sandbox, where the container may make user namespaces.
FROM node:22-bookworm-slim AS with-clis
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates bubblewrap \
    && rm -rf /var/lib/apt/lists/*
COPY testdata/clis/package.json testdata/clis/package-lock.json /opt/clis/
RUN cd /opt/clis && npm pkg delete 'dependencies.@qwen-code/qwen-code' 'dependencies.opencode-ai' \
    && npm install --omit=dev --no-audit --no-fund && npm cache clean --force
ENV PATH=/opt/clis/node_modules/.bin:$PATH
COPY --from=build /usr/bin/tini-static /usr/bin/tini-static
COPY --from=build /out/jakebot /usr/local/bin/jakebot
# The CLIs refuse some permission modes as root.
COPY --from=build --chown=node:node /out/data /data
ENV HOME=/data ALLOWED_ROOTS=/data/work HEALTH_ADDR=127.0.0.1:9090 \
    SHUTDOWN_GRACE=5s SHUTDOWN_DEADLINE=4s
VOLUME /data
WORKDIR /data
USER node
HEALTHCHECK --interval=30s --timeout=10s --start-period=10s CMD ["/usr/local/bin/jakebot", "health"]
ENTRYPOINT ["/usr/bin/tini-static", "--", "/usr/local/bin/jakebot"]
