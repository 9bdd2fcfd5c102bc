#!/usr/bin/env bash
# redis-cluster.sh: a local Redis Cluster on loopback for trying `neardup serve --redis`.
#
# Starts 3 masters with one replica each (six redis-server processes) on 127.0.0.1, ports
# PORT..PORT+5 (default 7000), in DIR (default ./redis-cluster), with the settings
# `neardup serve --redis` checks at startup (docs/service.md, "Redis Cluster"):
# appendonly yes, appendfsync everysec, cluster-node-timeout 15000 and
# hash-max-listpack-entries 512. It joins them with redis-cli --cluster create, waits until
# every node says cluster_state:ok and every replica is in sync, and prints the --redis URL.
#
# It is for a developer's machine, not production: one machine holds every copy, and no
# password is set (the nodes listen on loopback only). The tests do not use it; they start
# their own clusters on free ports (internal/redistest).
#
# Usage: scripts/redis-cluster.sh start [DIR] [PORT]
#        scripts/redis-cluster.sh stop  [DIR] [PORT]   (SHUTDOWN NOSAVE each node; DIR is kept)
# Then:  neardup serve --redis redis://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002
set -euo pipefail

cmd=${1:-}
dir=${2:-./redis-cluster}
port=${3:-7000}
nodes=6

for tool in redis-server redis-cli; do
	command -v "$tool" >/dev/null || { echo "$tool is missing (Debian: apt-get install redis-server)" >&2; exit 2; }
done

case $cmd in
start)
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	addrs=()
	for i in $(seq 0 $((nodes - 1))); do
		p=$((port + i))
		mkdir -p "$dir/$p"
		redis-server --port "$p" --bind 127.0.0.1 --dir "$dir/$p" --daemonize yes \
			--pidfile "$dir/$p/redis.pid" --logfile "$dir/$p/log" \
			--cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 15000 \
			--appendonly yes --appendfsync everysec --hash-max-listpack-entries 512 --save ''
		addrs+=("127.0.0.1:$p")
	done
	for a in "${addrs[@]}"; do
		until redis-cli -h 127.0.0.1 -p "${a##*:}" ping >/dev/null 2>&1; do sleep 0.1; done
	done
	if ! redis-cli -p "$port" cluster info | grep -q cluster_state:ok; then
		redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes >"$dir/create.log"
	fi
	for a in "${addrs[@]}"; do
		until redis-cli -p "${a##*:}" cluster info | grep -q cluster_state:ok; do sleep 0.2; done
		until redis-cli -p "${a##*:}" info replication | grep -qE 'connected_slaves:1|master_link_status:up'; do sleep 0.2; done
	done
	echo "redis://$(IFS=,; echo "${addrs[*]:0:3}")"
	;;
stop)
	for i in $(seq 0 $((nodes - 1))); do
		redis-cli -p $((port + i)) shutdown nosave >/dev/null 2>&1 || true
	done
	;;
*)
	sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
