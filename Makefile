# `make dev`: build the portal (when its sources changed) and start `grus dev`: grus-api with the
# portal on http://127.0.0.1:8080 (dev login) and two simulated clusters, in one process, over
# the local PostgreSQL and Redis. Flags for `grus dev`: make dev ARGS="--clusters 3".
# `make test`: the whole test suite (scripts/test.sh).

.PHONY: dev test

PORTAL_SOURCES := $(shell find portal/src portal/public -type f 2>/dev/null) \
	$(wildcard portal/index.html portal/vite.config.ts portal/tsconfig*.json)

dev: portal/dist/index.html
	cargo run -p grus -- dev --portal-dir portal/dist $(ARGS)

portal/node_modules/.package-lock.json: portal/package.json portal/package-lock.json
	npm --prefix portal install --no-audit --no-fund
	@touch $@

portal/dist/index.html: portal/node_modules/.package-lock.json $(PORTAL_SOURCES)
	npm --prefix portal run build
	@touch $@

test:
	./scripts/test.sh
