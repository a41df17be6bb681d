# The two commands of the README are `make run` and `make test`.
GO        ?= go
BIN       := bin/redline
ARGS      ?=
# The target of `make run`; the bundled reference server once it forms clusters.
TARGET    ?= reference
# Docker tests form real clusters; packages run one at a time (-p 1) so that
# one package's cleanup never removes another's containers.
TEST_TIMEOUT ?= 40m

.PHONY: all build deps run test vet bench-server clean commands

all: build

# install-deps installs what redline and its tests need from Debian's
# packages (redis-server, redis-tools, gcc for the clock shim) when missing.
deps:
	@scripts/install-deps

# A static binary: the reference server image is built FROM scratch from it.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X main.buildCommit=$$(git rev-parse --short=12 HEAD 2>/dev/null)$$(git diff --quiet HEAD 2>/dev/null || echo +dirty)" -o $(BIN) ./cmd/redline

# The main job: a default test against the bundled reference cluster, with
# faults: counter and set traffic while a primary is cut off from its
# peers and another is killed. It needs only Go and Docker (the reference
# server's image is built FROM scratch from bin/redline); what `make test`
# installs (scripts/install-deps) is for the tests and --client.
RUN_ARGS ?= --workload counter,set --nemesis partition:isolate-primary,kill:primary --nemesis-interval 10s --time-limit 50s
run: build
	@REDLINE_BINARY=$(abspath $(BIN)) ./$(BIN) run --target $(TARGET) $(RUN_ARGS) $(ARGS); rc=$$?; \
	case $$rc in \
	  0|1|2) echo "make run: redline exited $$rc, its verdict (0 valid, 1 invalid: anomalies found, 2 unknown; see README 'Exit codes'): the run itself worked"; exit 0 ;; \
	  *) exit $$rc ;; \
	esac

# commands regenerates the reference server's command metadata (docs, key
# specs, tips, ACL categories) from Redis 7.0.15's src/commands/*.json, read
# out of Debian's source tarball of Redis (URL and SHA-256 pinned in
# server/internal/gencommands/source.go, downloaded once into
# ${XDG_CACHE_HOME:-~/.cache}/redline/redis-src; offline, set
# REDLINE_REDIS_SRC to a Redis 7.0.15 source tree or tarball). A test of that
# package fails in CI when the checked-in file differs from what it makes.
commands:
	$(GO) run ./server/internal/gencommands -o server/commands_redis_gen.go

vet:
	$(GO) vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi

# Browser tests save their screenshots under test-artifacts/browser/.
test: deps build vet
	REDLINE_BINARY=$(abspath $(BIN)) REDLINE_ARTIFACTS=$(abspath test-artifacts) $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -p 1 ./...

clean:
	rm -rf bin
	-./$(BIN) cluster down 2>/dev/null
