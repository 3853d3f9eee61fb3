#!/bin/bash
# overhead-ab.sh: BenchmarkRecordingOverhead (issue 17 item 5) for two
# builds of the record package, alternated ABBA, each invocation under
# flock /tmp/bench.lock, the load average written before and after.
#
# usage: scripts/overhead-ab.sh BASE.test NEW.test OUTDIR "DBS" ROUNDS [test flags...]
#   BASE.test, NEW.test  `go test -c ./record` binaries of the two builds
#   DBS                  any of: sqlite postgres mariadb
#   ROUNDS               per database, ROUNDS × (base new new base)
#   test flags           e.g. -overhead.run 5s (with BT=4x: pairs per invocation)
# Each invocation runs BT (default 10x) pairs into OUTDIR/DB-ROUND-{base,new}-TIME.txt;
# scripts/overhead-sum.py OUTDIR/*.txt pools the per-pair figures per build.
# docs/benchmarks.md, "Item 5, sixth pass", used it (as /tmp/rec/ab.sh).
set -u
base=$1 new=$2 out=$3 dbs=$4 rounds=$5
shift 5
mkdir -p "$out"
BT=${BT:-10x}
for db in $dbs; do
  for r in $(seq 1 "$rounds"); do
    for b in base new new base; do
      bin=$base
      [ "$b" = new ] && bin=$new
      f=$out/$db-$r-$b-$(date +%H%M%S).txt
      { echo "# $(date -u +%T) $b $db round $r"; echo "# load before: $(cat /proc/loadavg)"; } > "$f"
      flock /tmp/bench.lock "$bin" -test.run XXX -test.bench "RecordingOverhead/$db\$" -test.benchtime "$BT" -test.v "$@" >> "$f" 2>&1
      echo "# load after: $(cat /proc/loadavg) $(date -u +%T)" >> "$f"
    done
  done
done
