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
.PHONY: help build install man test fmt-check vet unit fuzz bench demo testdata clean $(DEMO_STEPS)

help:
	@echo "make build      build $(BIN) (static, no cgo)"
	@echo "make install    install the binary, man pages and completions (PREFIX, DESTDIR)"
	@echo "make man        regenerate docs/man/*.1 and completions/ from the commands"
	@echo "make test       gofmt check, go vet, go test $(RACE) ./..."
	@echo "make demo       run the tool on bundled real data"
	@echo "make fuzz       run every fuzz target for FUZZTIME each (now $(FUZZTIME))"
	@echo "make bench      every benchmark, with allocations"
	@echo "make testdata   regenerate the synthetic captures (go run ./internal/gen)"

# A static binary: no cgo (the replay engine's cgo part is behind the rdmacm
# build tag), so it runs on any Linux of the same architecture. -buildvcs=auto
# overrides a GOFLAGS=-buildvcs=false so --version names the commit.
build:
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/cmpd-dissect

install: build
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
man:
	$(GO) run ./cmd/cmpd-dissect gen-docs --man docs/man --completions completions

# make test is what CI runs (.ci/run): formatting, vet, every unit test (with
# -race), and the hostile-input harness (make torture, mk/torture.mk). With
# TEST_LIVE=1 (.ci/run sets it when it runs as root on Linux) it also boots the
# VM lab and checks fresh captures from the real Linux RDMA stack
# (test-live-ci, mk/live.mk).
test: fmt-check vet unit torture $(if $(TEST_LIVE),test-live-ci)

fmt-check:
	@unformatted=$$(gofmt -l $$(find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*' -not -path './live/work/*')); \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt: these files are not formatted (run gofmt -w):"; echo "$$unformatted"; exit 1; \
	fi

vet:
	$(GO) vet $(PKGS)

unit:
	$(GO) test $(RACE) -timeout $(TEST_TIMEOUT) $(PKGS)

# Every "func FuzzXxx(" in a _test.go file, each run alone for FUZZTIME.
# A failure stops the run; go test keeps the crasher under testdata/fuzz/.
fuzz:
	@set -e; \
	targets=$$(grep -rE --include='*_test.go' -o '^func Fuzz[A-Za-z0-9_]*\(' . \
		| grep -v '^./.git/' | sed -E 's/^(.*)\/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\($$/\1 \2/' | sort -u); \
	if [ -z "$$targets" ]; then echo "no fuzz targets"; exit 1; fi; \
	echo "$$targets" | while read -r dir name; do \
		echo "== $$name ($$dir, $(FUZZTIME))"; \
		$(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) "$$dir"; \
	done

bench:
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)

testdata:
	$(GO) run ./internal/gen

clean:
	rm -rf bin

# ---- demo ------------------------------------------------------------------
# Each step is a target; add yours with "DEMO_STEPS += demo-yours" and a rule.
DEMO_STEPS += demo-pvtdata

demo: build
	@$(MAKE) --no-print-directory $(DEMO_STEPS)

demo-pvtdata:
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
