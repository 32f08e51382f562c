# airnode — build and test entry points. `make test` is what CI runs.
SHELL := /bin/bash
GO ?= go

.PHONY: test deps zookeeper vet build

## test: install what is missing, then vet and run every test with the race detector.
## -p 4: four test binaries at once on this 2-vCPU machine. The packages' tests
## mostly wait (timeouts, heartbeats, real ZooKeeper, real processes): with
## go test's default of one per CPU the run averaged a load of 1-2 and took
## 1,218 s; the budget is 20 minutes.
test: deps vet
	$(GO) test -race -count=1 -p 4 -timeout 15m ./...

## deps: Go modules and Debian's zookeeper package (for the real-ZooKeeper tests)
deps: zookeeper
	$(GO) mod download

zookeeper:
	@if [ ! -f /usr/share/java/zookeeper.jar ]; then \
		echo "installing Debian's zookeeper package"; \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y zookeeper; \
	fi
	@command -v java >/dev/null || { echo "java is missing: apt-get install -y default-jre-headless"; exit 1; }

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

build:
	$(GO) build -o bin/airnode ./cmd/airnode
