#!/usr/bin/env python3
# overhead-sum.py: per invocation and pooled per (database, build) figures
# from scripts/overhead-ab.sh output files: the last (not the warm-up) log of
# each figure, median [q1 … q3] (min … max) of the per-pair own-CPU overhead
# (the figure the 5 % bar is judged on), throughput, all-process CPU, and the
# own-CPU split (client process, client sessions, slot backend).
# usage: scripts/overhead-sum.py OUTDIR/*.txt
import re, sys, statistics, collections
def q(x, p):
    x = sorted(x); k = p*(len(x)-1); i = int(k)
    return x[-1] if i+1 >= len(x) else x[i] + (k-i)*(x[i+1]-x[i])
def spread(x):
    return "%.1f [%.1f … %.1f] (%.1f … %.1f) n=%d" % (statistics.median(x), q(x,.25), q(x,.75), min(x), max(x), len(x))
pool = collections.defaultdict(lambda: collections.defaultdict(list))
agg = collections.defaultdict(lambda: [0.0, 0.0, 0])
for fn in sys.argv[1:]:
    s = open(fn).read()
    m = re.search(r'# \S+ (\S+) (\S+) round', s)
    if not m: continue
    build, db = m.group(1), m.group(2)
    la = re.findall(r'# load (?:before|after): (\S+)', s)
    figs = {}
    for name, key in [('own-CPU-per-txn overhead', 'own'), ('throughput overhead', 'tput'), ('CPU-per-txn overhead % (all', 'all'),
                      ('baseline client process µs/txn', 'cb'), ('recorded client process µs/txn', 'cr'),
                      ("baseline client sessions' server CPU µs/txn", 'sb'), ("recorded client sessions' server CPU µs/txn", 'sr'),
                      ('commit stream backend', 'st'), ('baseline own CPU µs/txn', 'ob'), ('recorded own CPU µs/txn', 'or')]:
        mm = re.findall(re.escape(name) + r'[^:]*: ([-0-9. ]+) =', s)
        if mm:
            v = [float(t) for t in mm[-1].split()]
            figs[key] = v
            pool[(db, build)][key] += v
    ma = (re.findall(r'aggregate ([0-9.]+) → ([0-9.]+)', s) or [None])[-1]
    tp = (re.findall(r'baseline (\d+) txn/s, recorded (\d+)', s) or [None])[-1]
    if 'FAIL' in s or 'own' not in figs:
        print(fn, 'FAILED or incomplete:', [l for l in s.splitlines() if 'FAIL' in l or 'Fatal' in l or 'completed no' in l][:3]); continue
    a = ''
    if ma:
        a = '%s→%s (%+.1f%%)' % (ma[0], ma[1], 100*float(ma[1])/float(ma[0])-100)
        agg[(db, build)][0] += float(ma[0]); agg[(db, build)][1] += float(ma[1]); agg[(db, build)][2] += 1
    print('%-8s %-5s load %s..%s base %s txn/s | own %s | tput %s | agg %s | client %.0f→%.0f backends %s stream %s' % (
        db, build, la[0] if la else '?', la[-1] if la else '?', tp[0] if tp else '?',
        spread(figs['own']), spread(figs['tput']), a,
        statistics.median(figs['cb']), statistics.median(figs['cr']),
        ('%.0f→%.0f' % (statistics.median(figs['sb']), statistics.median(figs['sr']))) if 'sb' in figs else '-',
        ('%.1f' % statistics.median(figs['st'])) if 'st' in figs else '-'))
print()
for k in sorted(pool):
    p = pool[k]
    print('POOLED %-8s %-5s own %s | tput %s | all %s | client %.0f→%.0f | backends %s | stream %s | ownus %.0f→%.0f' % (k[0], k[1], spread(p['own']), spread(p['tput']),
          spread(p['all']) if p['all'] else '-', statistics.median(p['cb']), statistics.median(p['cr']),
          ('%.0f→%.0f' % (statistics.median(p['sb']), statistics.median(p['sr']))) if p['sb'] else '-',
          spread(p['st']) if p['st'] else '-', statistics.median(p['ob']), statistics.median(p['or'])))
