#!/usr/bin/env bash
# Three adloaderd replicas behind a gRPC proxy (HAProxy, the default, or nginx), sharing one
# Redis, on loopback ports.
#
#   Examples/cluster/cluster.sh start   # Redis, three daemons, the proxy; prints where to connect
#   Examples/cluster/cluster.sh stop    # stops all of them (SIGTERM: the daemons drain)
#   Examples/cluster/cluster.sh status  # which of them run
#
# Clients connect to the proxy on 127.0.0.1:$CLUSTER_PORT (default 7420) and send the affinity
# key as `x-adloader-affinity` metadata. CLUSTER_PROXY=haproxy (default; multiplexes calls on
# its upstream connections, the cheaper one: BENCHMARKS.md section 7) or nginx (its ring is the
# one `adloader --endpoints 127.0.0.1:7421,127.0.0.1:7422,127.0.0.1:7423 --affinity KEY ...`
# computes, so the framed protocol reaches the same replica as nginx; HAProxy's ring differs).
# Settings (environment): CLUSTER_DIR (pids, logs, configuration, each replica's pool store
# NAME-pools.sqlite; default /tmp/adloader-cluster;
# `status` and `stop` default to the directory of the last `start`),
# CLUSTER_PORT (nginx; the replicas take the next three ports, their admin listeners the three
# after), CLUSTER_REDIS_PORT (default 7430), ADLOADERD (default .build/release/adloaderd, from
# `make release`), NGINX (default nginx), HAPROXY (default haproxy), REDIS_SERVER (default redis-server).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# `start` records its directory here, so that `status` and `stop` find a cluster started with
# a custom CLUSTER_DIR without being told again (CLUSTER_DIR, when set, still wins).
pointer=${TMPDIR:-/tmp}/adloader-cluster.dir
if [ -n "${CLUSTER_DIR:-}" ]; then
    dir=$CLUSTER_DIR
elif [ "${1:-}" != start ] && [ -s "$pointer" ] && [ -d "$(cat "$pointer")" ]; then
    dir=$(cat "$pointer")
else
    dir=/tmp/adloader-cluster
fi
port=${CLUSTER_PORT:-7420}
redis_port=${CLUSTER_REDIS_PORT:-7430}
adloaderd=${ADLOADERD:-$root/.build/release/adloaderd}
nginx=${NGINX:-nginx}
haproxy=${HAPROXY:-haproxy}
proxy=${CLUSTER_PROXY:-haproxy}
case "$proxy" in nginx | haproxy) ;; *) echo "CLUSTER_PROXY must be haproxy or nginx, not $proxy" >&2; exit 2 ;; esac
redis=${REDIS_SERVER:-redis-server}
replicas=(a b c)

replica_port() { echo $((port + 1 + $1)); }
admin_port() { echo $((port + 4 + $1)); }

# Waits (bounded, 10 s) until something accepts on 127.0.0.1:$1.
wait_port() {
    for _ in $(seq 1 200); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
        sleep 0.05
    done
    echo "nothing listens on 127.0.0.1:$1 after 10 s (logs in $dir)" >&2
    return 1
}

# Whether process $1 is alive: an exited one waiting to be reaped (a zombie, where no init
# reaps orphans promptly, e.g. in a container) counts as gone.
alive() { case "$(ps -o stat= -p "$1" 2>/dev/null)" in "" | Z*) return 1 ;; esac; }

running() { [ -f "$dir/$1.pid" ] && alive "$(cat "$dir/$1.pid")"; }

# Sends SIGTERM to the process in $dir/$1.pid, waits (bounded, 15 s), then SIGKILL.
stop_one() {
    local name=$1 pid
    [ -f "$dir/$name.pid" ] || return 0
    pid=$(cat "$dir/$name.pid")
    if alive "$pid"; then
        kill -TERM "$pid"
        for _ in $(seq 1 150); do alive "$pid" || break; sleep 0.1; done
        if alive "$pid"; then kill -KILL "$pid"; fi
        echo "stopped $name (pid $pid)"
    fi
    rm -f "$dir/$name.pid"
}

start() {
    [ -x "$adloaderd" ] || { echo "no $adloaderd: run \`make release\` first (or set ADLOADERD)" >&2; exit 1; }
    if [ "$proxy" = nginx ]; then
        command -v "$nginx" >/dev/null || { echo "no nginx: apt-get install nginx (make deps)" >&2; exit 1; }
    else
        command -v "$haproxy" >/dev/null || { echo "no haproxy: apt-get install haproxy (make deps)" >&2; exit 1; }
    fi
    if running nginx || running haproxy; then echo "already running (Examples/cluster/cluster.sh stop first)" >&2; exit 1; fi
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    echo "$dir" >"$pointer"
    trap 'echo "start failed; stopping what started" >&2; stop' ERR

    "$redis" --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
        --loglevel warning >"$dir/redis.log" 2>&1 &
    echo $! >"$dir/redis.pid"
    wait_port "$redis_port"
    echo "redis    127.0.0.1:$redis_port (pid $(cat "$dir/redis.pid"))"

    for i in 0 1 2; do
        local name=${replicas[$i]} p
        p=$(replica_port "$i")
        # The instance name defaults to host:port, the name nginx's ring hashes.
        "$adloaderd" --config "$here/adloaderd.json" --port "$p" --redis-port "$redis_port" \
            --admin-port "$(admin_port "$i")" --pool-store-path "$dir/$name-pools.sqlite" \
            >"$dir/$name.out" 2>"$dir/$name.log" &
        echo $! >"$dir/$name.pid"
    done
    for i in 0 1 2; do
        wait_port "$(replica_port "$i")"
        echo "replica  127.0.0.1:$(replica_port "$i") (pid $(cat "$dir/${replicas[$i]}.pid"), dashboard http://127.0.0.1:$(admin_port "$i")/)"
    done

    local template=nginx.conf.template config=nginx.conf
    if [ "$proxy" = haproxy ]; then template=haproxy.cfg.template config=haproxy.cfg; fi
    sed -e "s|@RUN_DIR@|$dir|g" -e "s|@PORT@|$port|g" -e "s|@PORT_A@|$(replica_port 0)|g" \
        -e "s|@PORT_B@|$(replica_port 1)|g" -e "s|@PORT_C@|$(replica_port 2)|g" \
        "$here/$template" >"$dir/$config"
    if [ "$proxy" = nginx ]; then
        # Own prefix, pid file, logs and temporary directories: no root needed, nothing in /etc.
        "$nginx" -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" -g 'daemon off;' >"$dir/nginx.out" 2>&1 &
    else
        "$haproxy" -db -f "$dir/haproxy.cfg" >"$dir/haproxy.out" 2>&1 &
    fi
    echo $! >"$dir/$proxy.pid"
    wait_port "$port"
    trap - ERR
    echo "$proxy $(printf '%*s' $((8 - ${#proxy})) '')127.0.0.1:$port (pid $(cat "$dir/$proxy.pid")): gRPC, routed by x-adloader-affinity"
    echo "try:     adloader --endpoints 127.0.0.1:$(replica_port 0),127.0.0.1:$(replica_port 1),127.0.0.1:$(replica_port 2) --affinity feed-42 stats"
    echo "stop:    $0 stop"
}

stop() {
    stop_one nginx
    stop_one haproxy
    for name in "${replicas[@]}"; do stop_one "$name"; done
    stop_one redis
    if [ -s "$pointer" ] && [ "$(cat "$pointer")" = "$(cd "$dir" 2>/dev/null && pwd)" ]; then rm -f "$pointer"; fi
}

status() {
    echo "cluster directory $dir"
    # The proxy asked for, and the other one too when it runs (a cluster started with the other
    # CLUSTER_PROXY).
    local names=(redis "${replicas[@]}" "$proxy")
    for other in nginx haproxy; do
        if [ "$other" != "$proxy" ] && running "$other"; then names+=("$other"); fi
    done
    for name in "${names[@]}"; do
        if running "$name"; then echo "$name running (pid $(cat "$dir/$name.pid"))"; else echo "$name stopped"; fi
    done
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
