# jake-bot. `make test` is what CI runs (see .ci/run).
GO ?= go
# Count-based: a time budget trips Go 1.26's fuzz coordinator race (go.dev/issue/75804).
FUZZTIME ?= 100000x
# Pinned; run with `go run pkg@version` so the linter's own dependencies stay out of go.mod.
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: build run test check vet clis fuzz bench bench-warm load load-full stress chaos docker docker-test

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/jakebot ./cmd/jakebot

run:
	$(GO) run ./cmd/jakebot

## test: formatting, vet, tidy module, staticcheck, every test with the race detector, short fuzz runs.
test: check
	$(GO) test -race -count=1 -timeout 30m ./...
	$(MAKE) fuzz

check:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum not tidy: run go mod tidy"; exit 1; }
	$(GO) run $(STATICCHECK) ./...

## clis: install the pinned Claude Code, Codex, Gemini CLI, Qwen Code and OpenCode (ACP) for the end-to-end tests.
clis:
	cd testdata/clis && npm install --no-audit --no-fund # not ci: see .ci/run

## fuzz: run every fuzz target briefly (FUZZTIME each).
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$target"; \
	    $(GO) test -run '^$$' -fuzz "^$$target$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

## stress: the concurrency-heavy tests many times over under the race detector,
## since a test that passes once proves little. Run it before you stop.
## Every core test STRESS_CORE times (most drive the router, whatever their
## name), but STRESS_SKIP: the slow ones that measure memory or push a huge
## reply through one goroutine (500 runs: about 8 minutes on 2 idle cores,
## 17 on a busy machine); the core, adapter and process packages whole
## STRESS_COUNT times.
STRESS_CORE ?= 500
STRESS_COUNT ?= 10
STRESS_SKIP ?= TestReplyKeepsABoundedHeadAndTail|TestIdleConversationMemory|TestCoordinatorFloodOfTinyDeltas
stress:
	$(GO) test -race -timeout 40m -count=$(STRESS_CORE) -skip '$(STRESS_SKIP)' ./core/
	$(GO) test -race -timeout 40m -count=$(STRESS_COUNT) ./core/... ./platforms/... ./plugins/cliproc/ ./plugins/remote/

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## load: 200 concurrent conversations of 2,000 streamed events each, every turn a real process
## (bot/load_test.go: peak RSS, line-to-edit delay, CPU per 1,000 events); then the load curve
## (bot/loadcurve_test.go), whose fake CLIs cost next to nothing so that what it measures is the bot:
## LOAD_STEPS conversations at once, on this machine and through each of LOAD_RUNNERS runners over
## an embedded NATS server, and the memory LOAD_IDLE idle conversations keep; it prints the table
## README.md's "How far it scales" shows. Both fail on a reply lost, cut or out of order.
## The default is CI's short step; load-full is the whole curve (several minutes).
LOAD_STEPS ?= 10,100
LOAD_RUNNERS ?= 0,1
LOAD_IDLE ?= 1000
## LOAD_SPREAD=1 starts each conversation's stream at a random point of its first 100 ms, as independent
## conversations would; by default they all write at the same instants, the worst case for a burst.
LOAD_SPREAD ?=
## LOAD_PROCS=1 runs each runner in a process of its own (the test binary again), as runners are deployed.
LOAD_PROCS ?=
## LOAD_PACE sets each stream's pace, deltas per write and the time between writes (5/100ms by default).
LOAD_PACE ?=
load:
	$(GO) test -run '^$$' -bench '^BenchmarkLoad$$' -benchtime 1x -count 1 ./bot
	JAKEBOT_LOAD_STEPS=$(LOAD_STEPS) JAKEBOT_LOAD_RUNNERS=$(LOAD_RUNNERS) JAKEBOT_LOAD_IDLE=$(LOAD_IDLE) JAKEBOT_LOAD_SPREAD=$(LOAD_SPREAD) \
	  JAKEBOT_LOAD_PROCS=$(LOAD_PROCS) JAKEBOT_LOAD_PACE=$(LOAD_PACE) \
	  $(GO) test -run '^$$' -bench '^BenchmarkLoadCurve$$' -benchtime 1x -count 1 -timeout 60m ./bot

load-full:
	$(MAKE) load LOAD_STEPS=10,100,1000 LOAD_RUNNERS=0,1,2 LOAD_IDLE=10000

## bench-warm: message → model request through jakebot for a cold and a warm turn of each CLI, and the memory
## of a warm CLI (BenchmarkTurnStart); a cold turn beside the same command spawned directly, in this process and
## through the built binary (BenchmarkColdTurn). The real CLIs, fake models.
bench-warm:
	$(GO) test -run '^$$' -bench '^Benchmark(TurnStart|ColdTurn)$$' -benchtime 5x -count 1 -timeout 30m ./bot

## chaos: conversations on the Telegram and Slack fakes through jakebot gateway and runner processes over an
## embedded NATS server, under every fault the bot must survive (bot/chaos, README "Several machines"); it
## prints the table and fails on a message lost, shown twice or lost without a word. The normal test run takes
## a short seeded step of it; this is the full run (a few minutes). CHAOS_SEED chooses the faults.
CHAOS_SEED ?= 1
CHAOS_CONVERSATIONS ?= 32
CHAOS_MESSAGES ?= 20
CHAOS_FAULTS ?= 6
chaos:
	$(GO) test -run '^TestChaos$$' -count=1 -v -timeout 30m ./bot/chaos -chaos.seed=$(CHAOS_SEED) \
	  -chaos.conversations=$(CHAOS_CONVERSATIONS) -chaos.messages=$(CHAOS_MESSAGES) -chaos.faults=$(CHAOS_FAULTS)

## docker: the images (README "Docker") with the builder this machine has: docker, else podman, else buildah.
## docker-test: what CI checks of them (.ci/docker-test: buildah and podman, the base images made if no registry answers).
## A docker client without a daemon it reaches does not count.
DOCKER ?= $(shell if docker info >/dev/null 2>&1; then echo docker; else command -v podman buildah 2>/dev/null | head -1; fi)
## podman and buildah write OCI images by default, which drop the HEALTHCHECK.
DOCKER_FORMAT = $(if $(filter docker,$(notdir $(DOCKER))),,--format docker)
docker:
	@[ -n "$(DOCKER)" ] || { echo "make docker needs docker (with its daemon), podman or buildah"; exit 1; }
	$(DOCKER) build $(DOCKER_FORMAT) --target bot -t jakebot:bot .
	$(DOCKER) build $(DOCKER_FORMAT) -t jakebot .

docker-test:
	.ci/docker-test
