# cmpd-dissect — build, test and demo. "make help" lists the targets.
#
# Other parts of the project add their targets below their own heading, or in
# a file of their own under mk/ (included at the end), and extend the demo by
# appending to DEMO_STEPS.

GO       ?= go
BIN      ?= bin/cmpd-dissect
FUZZTIME ?= 30s
# RACE is on by default. Measured on this project's shared 2-core machine:
# a fresh clone's "make demo && make test" took 3m44s with -race (at
# be7bd32; cmd/ is the slowest package, 2m40s), up to 11 min when other
# builds loaded the machine. "make test RACE=" drops it; TEST_TIMEOUT keeps
# go test's 10-minute default from cutting a slow race run short.
RACE         ?= -race
TEST_TIMEOUT ?= 30m
PKGS     ?= ./...

# Install locations ("make install PREFIX=/usr DESTDIR=pkgroot").
PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man/man1
# A release build names its version: "make build VERSION=v1.2.0". Without
# it, --version gives the Go module version from the build info. COMMIT is
# the fallback for the commit where Go records none (a git worktree, whose
# .git is a file, is not stamped).
VERSION ?=
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell [ -n "$$(git status --porcelain 2>/dev/null)" ] && echo +dirty)
LDFLAGS  = $(if $(COMMIT),-X main.commit=$(COMMIT)) $(if $(VERSION),-X main.version=$(VERSION))

# The Linux kernel's real private data (net/sunrpc/xprtrdma verbs.c and
# svcrdma svc_rdma_transport.c; the same bytes are in testdata/pcaps/real/).
KERNEL_CLIENT_PD := f6ab0e1801010303
KERNEL_SERVER_PD := f6ab0e1801000303

.DEFAULT_GOAL := build
.PHONY: help help-check build install man test fmt-check vet unit fuzz bench bench-go demo testdata docs clean snapshot $(DEMO_STEPS)

# Every target carries a "## what it does" comment on its rule line, here
# and in mk/*.mk: "make help" prints them, "make help-check" (part of make
# test) fails on a target without one, so the list cannot drift.
help: ## list every target (this)
	@echo "make TARGET [VAR=value ...] (the VARs are the capitals below and at the top of Makefile and mk/*.mk)"
	@awk -F':[^#]*## ' '/^[a-zA-Z0-9_.-]+:.*## / { printf "  %-16s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

help-check: ## fail if a target in Makefile or mk/*.mk has no "## " help text
	@missing=$$(grep -HnE '^[a-zA-Z0-9_.-]+( [a-zA-Z0-9_.-]+)*:([^=]|$$)' $(MAKEFILE_LIST) \
		| grep -vE ':[0-9]+:\.[A-Z_]+:' | grep -v '## '); \
	if [ -n "$$missing" ]; then \
		echo "help-check: these targets have no \"## help text\" on their rule line:"; echo "$$missing"; exit 1; \
	fi

# A static binary: no cgo (the replay engine's cgo part is behind the rdmacm
# build tag), so it runs on any Linux of the same architecture. -buildvcs=auto
# overrides a GOFLAGS=-buildvcs=false so --version names the commit.
build: ## build BIN (bin/cmpd-dissect): static, no cgo, VERSION/COMMIT stamped
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/cmpd-dissect

install: build ## install the binary, man pages and completions (PREFIX, DESTDIR)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR) \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d
	install -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/cmpd-dissect
	install -m 0644 docs/man/*.1 $(DESTDIR)$(MANDIR)/
	install -m 0644 completions/cmpd-dissect.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/cmpd-dissect
	install -m 0644 completions/_cmpd-dissect $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_cmpd-dissect
	install -m 0644 completions/cmpd-dissect.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/cmpd-dissect.fish

# The man pages and completion scripts are generated from the cobra command
# definitions and committed; TestDocsInSync fails when they are stale.
man: ## regenerate docs/man/*.1 and completions/ from the commands
	$(GO) run -tags gendocs ./cmd/cmpd-dissect gen-docs --man docs/man --completions completions

# make test is what CI runs (.ci/run): formatting, vet, the help check, every
# unit test (with -race) but the hostile-input harness's, and the harness once
# (make torture, mk/torture.mk: TORTURE_TESTS). With TEST_LIVE=1 (.ci/run sets
# it when it runs as root on Linux) it also boots the VM lab and checks fresh
# captures from the real Linux RDMA stack (test-live-ci, mk/live.mk).
test: fmt-check vet help-check unit torture $(if $(TEST_LIVE),test-live-ci) ## what CI runs: gofmt check, vet, help-check, unit, torture (TEST_LIVE=1: also test-live-ci)

fmt-check: ## fail if a Go file is not gofmt-formatted
	@unformatted=$$(gofmt -l $$(find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*' -not -path './live/work/*')); \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files are not formatted (run gofmt -w):"; echo "$$unformatted"; exit 1; \
	fi

vet: ## go vet PKGS (default ./...)
	$(GO) vet $(PKGS)

# The export is also read back by DuckDB (export/duckdb_test.go): its Go
# bindings need cgo and a C compiler, so that test sits behind the duckdb
# build tag and runs as a step of its own; the tool stays cgo-free. Cold, the
# step builds DuckDB's bindings (about 1 min on this project's 2-core
# machine, more when loaded); cached, it takes seconds.
unit: ## go test RACE PKGS (-race, ./...), all but the torture harness's tests (make torture runs those); the DuckDB read-back of the export
	$(GO) test $(RACE) -timeout $(TEST_TIMEOUT) -skip '$(TORTURE_TESTS)' $(PKGS)
	$(GO) test -tags duckdb -timeout $(TEST_TIMEOUT) ./export/...

# Every "func FuzzXxx(" in a _test.go file, each run alone for FUZZTIME.
# A failure stops the run; go test keeps the crasher under testdata/fuzz/.
fuzz: ## run every fuzz target for FUZZTIME each
	@set -e; \
	targets=$$(grep -rE --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]*\(' . \
		| grep -v '^./.git/' | sed -E 's/^(.*)\/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($$/\1 \2/' | sort -u); \
	if [ -z "$$targets" ]; then echo "no fuzz targets"; exit 1; fi; \
	echo "$$targets" | while read -r dir name; do \
		echo "== $$name ($$dir, $(FUZZTIME))"; \
		$(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) "$$dir"; \
	done

# make bench runs both kinds of benchmark: bench-go, then bench-compare
# (mk/bench.mk), which generates captures of 200k and 2M packets and times
# whole processes against tshark: it takes minutes.
bench: bench-go bench-compare ## bench-go, then bench-compare (the 200k- and 2M-packet comparison with tshark: minutes)

bench-go: ## every Go benchmark of PKGS, with allocations (go test -bench=. -benchmem)
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)

testdata: ## regenerate the synthetic captures (go run ./internal/gen)
	$(GO) run ./internal/gen

# docs/findings.md is generated from the packages' codes.go (internal/catalog
# tests that it is up to date), the man pages from the commands (make man).
docs: man ## regenerate docs/findings.md from the findings catalogue, and the man pages
	$(GO) run ./cmd/cmpd-dissect findings --markdown > docs/findings.md.tmp
	mv docs/findings.md.tmp docs/findings.md

clean: ## remove bin/
	rm -rf bin

# make snapshot BIN=/tmp/me/cmpd-dissect OUT=/tmp/me/out builds this tree
# into BIN and writes every view's output on every capture under testdata/
# to OUT (internal/snapshot/views.sh); snapshots of two trees compare byte
# for byte with diff -r.
snapshot: ## build BIN, then every view on every capture into OUT= (for diff -r against another tree's)
	@test -n "$(OUT)" || { echo "make snapshot: set OUT=DIR (where the outputs go)"; exit 2; }
	@$(MAKE) --no-print-directory build
	internal/snapshot/views.sh $(BIN) $(OUT)

# ---- demo ------------------------------------------------------------------
# Each step is a target; add yours with "DEMO_STEPS += demo-yours" and a rule.
DEMO_STEPS += demo-pvtdata

demo: build ## run the tool on bundled real data (every DEMO_STEPS target)
	@$(MAKE) --no-print-directory $(DEMO_STEPS)

demo-pvtdata: ## demo: the RFC 8797 private data of the Linux NFS client and server
	@echo "== RFC 8797 private data the Linux NFS client sends in its CM REQ / MPA Request"
	$(BIN) pvtdata $(KERNEL_CLIENT_PD)
	@echo
	@echo "== ... and the Linux NFS server in its REP / MPA Reply"
	$(BIN) pvtdata $(KERNEL_SERVER_PD)
	@echo
	@echo "== What the two negotiate (RFC 8797 §4.1, §4.2)"
	$(BIN) pvtdata negotiate $(KERNEL_CLIENT_PD) $(KERNEL_SERVER_PD)
	@echo
	@echo "== The client's message behind 4 other octets: an RFC 8797 receiver finds it, Linux does not"
	$(BIN) pvtdata --mode linux 00000000$(KERNEL_CLIENT_PD)
	@echo

# Targets of other parts of the project live in mk/*.mk.
-include $(wildcard mk/*.mk)
