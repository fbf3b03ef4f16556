# syntax=docker/dockerfile:1
# jake-bot: a static binary on a minimal image; the with-clis target adds
# Node.js and the pinned coding CLIs.
#   docker build -t jakebot .
#   docker build --target with-clis -t jakebot:clis .

FROM golang:1.26-bookworm AS build
# An init for PID 1 (jakebot reaps orphans itself there too; tini is the
# belt to those braces). tini-static runs on distroless.
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/jakebot ./cmd/jakebot

# The bot alone: bring your own CLIs (mount them, or extend this image).
FROM gcr.io/distroless/static-debian12:nonroot AS bot
COPY --from=build /usr/bin/tini-static /usr/bin/tini-static
COPY --from=build /out/jakebot /usr/local/bin/jakebot
WORKDIR /work
ENTRYPOINT ["/usr/bin/tini-static", "--", "/usr/local/bin/jakebot"]

# The bot with Claude Code, Codex and Gemini CLI at the versions the tests pin.
FROM node:22-bookworm-slim AS with-clis
RUN apt-get update && apt-get install -y --no-install-recommends git ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY testdata/clis/package.json testdata/clis/package-lock.json /opt/clis/
RUN cd /opt/clis && npm install --omit=dev --no-audit --no-fund
ENV PATH=/opt/clis/node_modules/.bin:$PATH
COPY --from=build /usr/bin/tini-static /usr/bin/tini-static
COPY --from=build /out/jakebot /usr/local/bin/jakebot
# The CLIs refuse some permission modes as root.
USER node
WORKDIR /home/node/work
ENTRYPOINT ["/usr/bin/tini-static", "--", "/usr/local/bin/jakebot"]

FROM bot
