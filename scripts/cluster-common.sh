# Shared helpers of scripts/cluster-failover-time and scripts/cluster-bench:
# start a cluster of reference nodes (KIND=ref) or redis-server nodes
# (KIND=redis) as local processes on 127.0.0.1 and form it with redis-cli.
# Source it; it needs $WORK (a scratch directory) and $BIN (the reference
# server binary, built from ./server/internal/refmain when missing).

for tool in redis-server redis-cli redis-benchmark; do
  command -v "$tool" >/dev/null || { echo "$tool missing: run scripts/install-deps" >&2; exit 1; }
done

declare -A PID

build_ref() {
  if [ -z "${NOBUILD:-}" ]; then
    go build -o "$BIN" ./server/internal/refmain
  fi
}

# start_node KIND PORT NODE_TIMEOUT_MS
start_node() {
  local kind=$1 port=$2 nt=$3 dir="$WORK/$1-$2"
  mkdir -p "$dir"
  local args=(--port "$port" --bind 127.0.0.1 --cluster-enabled yes --cluster-node-timeout "$nt"
    --cluster-config-file "$dir/nodes.conf" --dir "$dir" --save "" --appendonly no --protected-mode no)
  if [ "$kind" = ref ]; then
    "$BIN" "${args[@]}" >>"$dir/log" 2>&1 &
  else
    redis-server "${args[@]}" --daemonize no >>"$dir/log" 2>&1 &
  fi
  PID[$port]=$!
  for _ in $(seq 100); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
    sleep 0.05
  done
  echo "node $kind:$port did not start" >&2
  cat "$dir/log" >&2
  exit 1
}

# create_cluster KIND BASE COUNT REPLICAS NODE_TIMEOUT_MS
create_cluster() {
  local kind=$1 base=$2 count=$3 reps=$4 nt=$5 addrs=()
  for ((i = 0; i < count; i++)); do
    start_node "$kind" $((base + i)) "$nt"
    addrs+=("127.0.0.1:$((base + i))")
  done
  if ! redis-cli --cluster create "${addrs[@]}" --cluster-replicas "$reps" --cluster-yes >"$WORK/create-$kind.log" 2>&1; then
    echo "redis-cli --cluster create failed for $kind:" >&2
    cat "$WORK/create-$kind.log" >&2
    exit 1
  fi
  wait_ok "$base" "$count"
}

# wait_ok BASE COUNT: every node reports cluster_state:ok and replicas have a live link.
wait_ok() {
  local base=$1 count=$2
  for _ in $(seq 600); do
    local ok=1
    for ((i = 0; i < count; i++)); do
      local p=$((base + i))
      redis-cli -p "$p" cluster info 2>/dev/null | grep -q "cluster_state:ok" || { ok=0; break; }
      if redis-cli -p "$p" role 2>/dev/null | head -1 | grep -q slave; then
        redis-cli -p "$p" info replication | grep -q "master_link_status:up" || { ok=0; break; }
      fi
    done
    [ $ok = 1 ] && return 0
    sleep 0.1
  done
  echo "cluster at $base did not become ok" >&2
  exit 1
}

stop_all() {
  for p in "${!PID[@]}"; do
    kill -9 "${PID[$p]}" 2>/dev/null || true
    wait "${PID[$p]}" 2>/dev/null || true
  done
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }
