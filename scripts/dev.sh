#!/usr/bin/env bash
# A working Grus on this machine: grus-api (GraphQL, allocator, ingestion; --dev login) and two
# simulated clusters with different GPU models, over the local PostgreSQL and Redis. Seeds a
# tenant `acme` with the project `demo` (members dev:admin and dev:alice) and a price book.
# Ctrl-C stops everything. `grus dev` (the CLI) will replace this script.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/grus-target}"
DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/grus_dev}"
REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
LISTEN="${GRUS_LISTEN:-127.0.0.1:8080}"
STATE="${GRUS_DEV_STATE:-/tmp/grus-dev}"

pg_isready -q -d "${DATABASE_URL%/*}/postgres" || {
    echo "PostgreSQL does not answer at ${DATABASE_URL%/*}: start it (pg_ctlcluster 15 main start) or set DATABASE_URL" >&2
    exit 1
}
redis-cli -u "$REDIS_URL" ping > /dev/null 2>&1 || {
    echo "Redis does not answer at $REDIS_URL: start it (redis-server --daemonize yes) or set REDIS_URL" >&2
    exit 1
}
db_name="${DATABASE_URL##*/}"
psql -q "${DATABASE_URL%/*}/postgres" -tc "SELECT 1 FROM pg_database WHERE datname = '$db_name'" | grep -q 1 ||
    psql -q "${DATABASE_URL%/*}/postgres" -c "CREATE DATABASE \"$db_name\""

cargo build -p grus-api -p grus-agent
bin="$CARGO_TARGET_DIR/debug"
mkdir -p "$STATE"
pids=()
trap 'kill "${pids[@]}" 2> /dev/null; wait' EXIT INT TERM

portal=()
[ -f portal/dist/index.html ] && portal=(--portal-dir portal/dist)
"$bin/grus-api" serve --dev --listen "$LISTEN" --database-url "$DATABASE_URL" --redis-url "$REDIS_URL" \
    "${portal[@]}" > "$STATE/api.log" 2>&1 &
pids+=($!)
until curl -sf "http://$LISTEN/healthz" > /dev/null; do
    kill -0 "${pids[0]}" 2> /dev/null || { cat "$STATE/api.log" >&2; exit 1; }
    sleep 0.2
done

gql() { # user, query, variables (JSON)
    curl -sf "http://$LISTEN/graphql" -H 'content-type: application/json' -H "x-grus-dev-user: $1" \
        -d "$(jq -nc --arg q "$2" --argjson v "${3:-{\}}" '{query: $q, variables: $v}')"
}
gql admin '{ me { id } }' > /dev/null
gql alice '{ me { id } }' > /dev/null
psql -q "$DATABASE_URL" -c "UPDATE users SET platform_admin = true WHERE subject = 'dev:admin'"

for cluster in east west; do
    gql admin 'mutation($id: String!) { registerCluster(id: $id) { agentToken } }' "{\"id\":\"$cluster\"}" > /dev/null || true
done
"$bin/grus-agent" --cluster east --redis "$REDIS_URL" --backend sim --sim-nodes 4x8xA100-80GB \
    --state-dir "$STATE/east" > "$STATE/east.log" 2>&1 &
pids+=($!)
"$bin/grus-agent" --cluster west --redis "$REDIS_URL" --backend sim --sim-nodes 4x4xT4 \
    --state-dir "$STATE/west" > "$STATE/west.log" 2>&1 &
pids+=($!)

if ! gql admin '{ project(slug: "demo") { id } }' | jq -e '.data.project.id' > /dev/null; then
    tenant=$(gql admin 'mutation { createTenant(slug: "acme", name: "Acme") { id } }' | jq -r '.data.createTenant.id')
    project=$(gql admin 'mutation($t: ID!) { createProject(tenantId: $t, slug: "demo", name: "Demo") { id queues { id } } }' \
        "{\"t\":\"$tenant\"}")
    project_id=$(jq -r '.data.createProject.id' <<< "$project")
    queue_id=$(jq -r '.data.createProject.queues[0].id' <<< "$project")
    gql admin 'mutation($p: ID!) { addMember(projectId: $p, subject: "dev:alice", role: MEMBER) }' \
        "{\"p\":\"$project_id\"}" > /dev/null
    gql admin 'mutation($q: ID!) { updateQuota(queueId: $q, resource: "gpu", guaranteed: 16000, limit: 32000) { id } }' \
        "{\"q\":\"$queue_id\"}" > /dev/null
    for price in 'A100-80GB 2.50 1.90' 'T4 0.35 0.30'; do
        set -- $price
        gql admin 'mutation($m: String!, $l: String!, $c: String!) { setPrice(gpuModel: $m, listPricePerGpuHour: $l,
            contractedPricePerGpuHour: $c, effectiveFrom: "2026-01-01T00:00:00Z") { gpuModel } }' \
            "{\"m\":\"$1\",\"l\":\"$2\",\"c\":\"$3\"}" > /dev/null
    done
fi

for _ in $(seq 1 150); do # the agents' first heartbeats
    gql admin '{ clusters { health } }' | jq -e '[.data.clusters[].health] | all(. == "healthy")' > /dev/null && break
    sleep 0.2
done

cat << EOF

Grus is running (logs in $STATE):
  GraphQL     http://$LISTEN/graphql   (dev login: header x-grus-dev-user: alice | admin)
  clusters    east (4 nodes x 8 A100-80GB), west (4 nodes x 4 T4)
  project     demo (tenant acme): admin is platform admin, alice a member

Submit a job as alice:
  curl -s http://$LISTEN/graphql -H 'content-type: application/json' -H 'x-grus-dev-user: alice' -d '{"query":
    "mutation { submitJob(input: {name: \"train\", project: \"demo\", gang: {minMembers: 2}, labels: [{key: \"grus.io/sim-duration-s\", value: \"30\"}], tasks: [{name: \"worker\", replicas: 2, image: \"train:1\", resources: {gpus: 4, gpuModels: [\"A100-80GB\"], cpuMilli: 8000, memoryMib: 65536}}]}) { job { id state } } }"}'
Ctrl-C stops everything.
EOF
wait -n "${pids[@]}"
