#!/bin/bash
# test_ownership.sh - a job owns its files, inputs never hang, advice works
# (docs/reliability.md):
#   - a second job for the same OUT, the same command started twice, and a
#     second resume of one checkpoint refuse at once naming the first job's
#     PID, touch nothing, and the first finishes with a verified output (the
#     first job is held with SIGSTOP while the second one tries, so nothing
#     depends on timing);
#   - FIFO, character device and socket inputs of sort, aggregate, verify
#     and sgd are refused (each under timeout 10: no hang);
#   - temporaries a killed run left are removed by the next run, which says
#     so; a finished run leaves only OUT;
#   - a checkpoint whose scratch data is corrupt is removed and the advice
#     is to run the command again, which works;
#   - a CSV header with a UTF-8 byte order mark; --mem beyond the machine.
# The long loops (10 tries at random delays, kills at random moments) are
# tests/redteam.sh, run by hand.
#
#   PEMS_RUN=build/pems-run PEMS_TEST_TMP=/tmp/x bash tests/test_ownership.sh
set -uo pipefail

RUN=${PEMS_RUN:?set PEMS_RUN}
T=${PEMS_TEST_TMP:-$(mktemp -d)}
mkdir -p "$T" && cd "$T" || exit 1
unset PEMS_CHECKPOINT_DIR PEMS_CHECKPOINT_EVERY
export PEMS_QUIET=1

fails=0 passes=0
ok() { echo "ok: $*"; passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$RUN" gen --quiet --format u64 --count 4M in.u64 || exit 1
SORT=(sort --format u64 --mem 64M --tmp .)

# wait_lock FILE PID: until FILE (a lock file) names PID; false if PID ended
wait_lock() {
	local i
	for ((i = 0; i < 3000; i++)); do
		[[ $(cat "$1" 2>/dev/null) == "$2" ]] && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}

# second_refuses WHAT PID CMD...: CMD must exit 1 naming PID; PID is stopped
second_refuses() {
	local what=$1 pid=$2 rc
	shift 2
	timeout 10 "$@" >second.out 2>&1
	rc=$?
	if ((rc == 1)) && grep -q "another job (PID $pid)" second.out; then
		ok "$what: refused ($(grep -m1 'PID' second.out | cut -c1-110))"
	else
		fail "$what: the second job exited $rc: $(head -3 second.out)"
	fi
}

# first_finishes WHAT PID OUT: resume PID, it must exit 0 with OUT sorted,
# leaving nothing but OUT
first_finishes() {
	local what=$1 pid=$2 out=$3 rc left
	kill -CONT "$pid"
	wait "$pid"
	rc=$?
	left=$(ls -d "$out".* pems-ckpt-* pems-[0-9]* 2>/dev/null)
	if ((rc != 0)); then
		fail "$what: the first job exited $rc"
	elif ! "$RUN" verify --format u64 "$out" --against in.u64 >/dev/null 2>&1; then
		fail "$what: the first job's output does not verify"
	elif [[ -n $left ]]; then
		fail "$what: left behind: $left"
	else
		ok "$what: the first job finished, verified, nothing left"
	fi
}

# 1. two jobs on one OUT (no checkpoints: the temporary is O_TMPFILE)
rm -rf o1*
"$RUN" "${SORT[@]}" --checkpoint-every off in.u64 o1 >/dev/null 2>&1 &
pid=$!
if wait_lock o1.pems-lock $pid; then
	kill -STOP $pid
	second_refuses "two jobs, one OUT" $pid "$RUN" "${SORT[@]}" --checkpoint-every off in.u64 o1
	first_finishes "two jobs, one OUT" $pid o1
else
	wait $pid
	fail "two jobs, one OUT: the first job never held o1.pems-lock"
fi

# 2. the same command twice, checkpoints on (default dir o2.pems-ckpt)
rm -rf o2*
"$RUN" "${SORT[@]}" --checkpoint-every 1 in.u64 o2 >/dev/null 2>&1 &
pid=$!
if wait_lock o2.pems-ckpt/lock $pid; then
	kill -STOP $pid
	second_refuses "the same command twice" $pid "$RUN" "${SORT[@]}" --checkpoint-every 1 in.u64 o2
	# another OUT but the same checkpoint dir: refused by the dir's lock
	second_refuses "one checkpoint dir, two jobs" $pid \
		"$RUN" "${SORT[@]}" --checkpoint-every 1 --checkpoint-dir o2.pems-ckpt in.u64 o2b
	first_finishes "the same command twice" $pid o2
else
	wait $pid
	fail "the same command twice: the first job never held o2.pems-ckpt/lock"
fi

# 3. two resumes of one checkpoint
rm -rf o3*
"$RUN" "${SORT[@]}" --checkpoint-every 1 in.u64 o3 >/dev/null 2>&1 &
pid=$!
for ((i = 0; i < 3000; i++)); do
	[[ -f o3.pems-ckpt/manifest ]] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.01
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
if [[ -f o3.pems-ckpt/manifest ]]; then
	"$RUN" resume o3.pems-ckpt >/dev/null 2>&1 &
	pid=$!
	# the resumed run holds OUT's lock (the resumer's own check of the
	# checkpoint's lock writes the same PID, before the exec)
	if wait_lock o3.pems-lock $pid; then
		kill -STOP $pid
		second_refuses "two resumes" $pid "$RUN" resume o3.pems-ckpt
		if [[ -f o3.pems-ckpt/manifest ]]; then
			ok "two resumes: the checkpoint survived the refused one"
		else
			fail "two resumes: the refused resume removed the checkpoint"
		fi
		first_finishes "two resumes" $pid o3
	else
		wait $pid
		fail "two resumes: the first resume never held the checkpoint's lock"
	fi
else
	ok "two resumes: the sort finished before a checkpoint (machine too fast), skipped"
fi

# 4. inputs that are not files: refused, never a hang
rm -f fifo sock
mkfifo fifo
"$RUN" gen --quiet --format kv --count 1000 ok.kv
if command -v python3 >/dev/null; then
	python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'
fi
for in in fifo /dev/zero sock; do
	[[ -e $in ]] || continue
	for cmd in "${SORT[*]} $in x.out" "aggregate --tmp . $in x.out" "verify --format u64 $in" \
		"sgd --model linear --format dense --dim 4 --data $in --out x.model" \
		"sgd --model linear --format dense --dim 4 --data ok.kv --test $in --out x.model"; do
		# shellcheck disable=SC2086
		timeout 10 "$RUN" $cmd >in.out 2>&1
		rc=$?
		if ((rc == 1)) && grep -Eq "is a FIFO|is a character device|No such device" in.out; then
			ok "input $in: $(cut -d' ' -f1 <<<"$cmd") refused at once"
		else
			fail "input $in: '$cmd' exited $rc (124: hung): $(head -2 in.out)"
		fi
	done
done

# 5. temporaries of a killed run are removed, saying so
rm -rf o5*
printf 'partial' >o5.pems-tmp
printf 'partial' >o5.pems-tmp.4242.0
"$RUN" "${SORT[@]}" --checkpoint-every off in.u64 o5 >o5.log 2>&1
if [[ -e o5.pems-tmp || -e o5.pems-tmp.4242.0 ]]; then
	fail "orphans: still there after a run: $(ls o5.*)"
elif [[ $(grep -c "left by an interrupted run" o5.log) != 2 ]]; then
	fail "orphans: removed without saying so: $(cat o5.log)"
else
	ok "orphans: $(grep -m1 'left by' o5.log)"
fi

# 6. a checkpoint whose scratch is corrupt: removed, advice to re-run works
rm -rf o6* pems-ckpt-*
"$RUN" "${SORT[@]}" --checkpoint-every 1 in.u64 o6 >/dev/null 2>&1 &
pid=$!
for ((i = 0; i < 3000; i++)); do
	[[ -f o6.pems-ckpt/manifest ]] && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.01
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
ctx=$(ls pems-ckpt-*-ctx* 2>/dev/null)
if [[ -f o6.pems-ckpt/manifest && -n $ctx ]]; then
	for f in $ctx; do	# bytes in every 256 KiB of the context files
		size=$(stat -c %s "$f")
		for ((off = 100; off < size; off += 262144)); do
			printf '\xa5' | dd of="$f" bs=1 seek=$off conv=notrunc status=none
		done
	done
	"$RUN" resume o6.pems-ckpt >o6.log 2>&1
	rc=$?
	if ((rc == 0)); then
		ok "corrupt scratch: no flipped byte was in use (resumed), skipped"
	elif ! grep -q "run the command again" o6.log || [[ -e o6.pems-ckpt/manifest ]]; then
		fail "corrupt scratch: exit $rc, checkpoint kept or no advice: $(tail -2 o6.log)"
	elif ! "$RUN" "${SORT[@]}" --checkpoint-every 1 in.u64 o6 >/dev/null 2>&1 ||
		! "$RUN" verify --format u64 o6 --against in.u64 >/dev/null 2>&1; then
		fail "corrupt scratch: running the command again failed"
	else
		ok "corrupt scratch: $(grep -m1 'run the command again' o6.log | cut -c1-100)"
	fi
else
	ok "corrupt scratch: the sort finished before a checkpoint, skipped"
fi

# 7. a UTF-8 byte order mark before the CSV header
printf '\xef\xbb\xbfkey,value\n1,5\n2,7\n1,1\n' >bom.csv
if "$RUN" aggregate --quiet --input-format csv --agg count,sum --tmp . bom.csv bom.out &&
	[[ $(cat bom.out) == $'key,count,sum\n1,2,6\n2,1,7' ]]; then
	ok "csv header with a byte order mark"
else
	fail "csv header with a byte order mark: $(cat bom.out 2>/dev/null)"
fi

# 8. a budget beyond the machine is clamped, with a warning
if "$RUN" "${SORT[@]}" --mem 100000G --checkpoint-every off in.u64 o8 >o8.log 2>&1 &&
	grep -q "warning: sort: --mem .* is more than this machine's memory" o8.log; then
	ok "--mem 100000G: $(grep -m1 warning o8.log | cut -c1-110)"
else
	fail "--mem 100000G: $(head -3 o8.log)"
fi

echo "$passes passed, $fails failed"
((fails == 0))
