#!/bin/bash
# sample CPU steal and memory-pressure counters every 5 s (observation only)
while :; do
	echo "$(date -u +%T) $(awk '$1 == "cpu" { printf "user=%s sys=%s idle=%s iowait=%s steal=%s ", $2, $4, $5, $6, $9 }' /proc/stat) $(awk '/^(allocstall_movable|compact_stall) /{printf "%s=%s ", $1, $2}' /proc/vmstat)"
	sleep 5
done
