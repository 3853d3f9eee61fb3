#!/bin/sh
# peer-compare.sh: side-by-side time and peak memory of txray and a peer
# checker (Elle via elle-cli, TimeKiller) on the same history file,
# alternating runs. It fetches nothing: give the peer's path. A peer that is
# not given or not found is skipped with a message (txray still runs).
#
# usage: scripts/peer-compare.sh [-n PAIRS] [-t TXRAY] [-e ELLE_CLI_JAR] [-k TIMEKILLER_JAR] EDN_FILE TK_FILE
#   EDN_FILE  a Jepsen EDN list-append history (txray: strict-serializable;
#             Elle: java -jar ELLE_CLI_JAR --model list-append
#             --consistency-models strict-serializable EDN_FILE)
#   TK_FILE   a TimeKiller JSON history (txray: snapshot-isolation;
#             TimeKiller (Chronos, checks SESSION and SI by default):
#             java -jar TIMEKILLER_JAR --history_path TK_FILE; TK_FILE must
#             end in .json)
#   Either file may be "-" to skip that comparison.
# Each run is wrapped in flock /tmp/bench.lock (measurements do not overlap)
# and in /usr/bin/time -f "%e %M" (wall seconds, peak RSS KiB). Output: one
# line per run, "tool input wall_s peak_rss_mib exit", then the load average.
# Example generation of the inputs (docs/benchmarks.md, "Issue 17"):
#   txray gen -n 1000000 -f edn -o la1m.edn
#   txray gen -n 1000000 -w rw-register --clients 50 --keys 1000 --dist zipfian \
#     --ops 15 --abort-rate 0 --level snapshot-isolation -f chronos -o tk1m.json
set -u
pairs=3 txray=txray elle="" tk=""
while getopts n:t:e:k: o; do
	case $o in
	n) pairs=$OPTARG ;;
	t) txray=$OPTARG ;;
	e) elle=$OPTARG ;;
	k) tk=$OPTARG ;;
	*) sed -n '2,21p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,21p' "$0"; exit 2; }
edn=$1 tkf=$2
[ -x /usr/bin/time ] || { echo "peer-compare: /usr/bin/time (GNU time) is needed for peak memory" >&2; exit 2; }

run() { # tool input cmd...
	tool=$1 in=$2; shift 2
	out=$(flock /tmp/bench.lock /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -1)
	rc=$?
	set -- $out
	echo "$tool $(basename "$in") ${1:-?} $(( ${2:-0} / 1024 )) $rc"
}
peer_ok() { # name path
	if [ -z "$2" ]; then echo "# $1: skipped (no path given)"; return 1; fi
	if [ ! -e "$2" ]; then echo "# $1: skipped ($2 not found)"; return 1; fi
	command -v java >/dev/null 2>&1 || { echo "# $1: skipped (no java)"; return 1; }
	return 0
}
echo "# tool input wall_s peak_rss_mib exit   (txray: $(command -v "$txray" || echo "$txray"))"
echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
i=0
while [ $i -lt "$pairs" ]; do
	if [ "$edn" != - ]; then
		run txray "$edn" "$txray" check -q --model strict-serializable --checker list-append "$edn"
		peer_ok elle-cli "$elle" && run elle "$edn" java -Xmx16g -jar "$elle" --model list-append --consistency-models strict-serializable "$edn"
	fi
	if [ "$tkf" != - ]; then
		run txray "$tkf" "$txray" check -q --model snapshot-isolation "$tkf"
		peer_ok TimeKiller "$tk" && run timekiller "$tkf" java -Xmx16g -jar "$tk" --history_path "$tkf"
	fi
	i=$((i + 1))
done
echo "# load average at end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
