# Permutation tables from l2part's latency.csv / placement.csv in DIR (this card's map):
# the CTA on SM s takes tile number vid[s] (partition 0's SMs first); a pair vid/2.
import csv, collections, statistics as st, sys
d = sys.argv[1]
lat = collections.defaultdict(dict)
for r in csv.DictReader(open(d + '/latency.csv')):
    if r['pass'] == '0': lat[int(r['sm'])][int(r['line'])] = int(r['cycles'])
sms = sorted(lat); n = len(lat[0])
pat = {s: [1 if lat[s][i] > st.median(lat[s].values()) else 0 for i in range(n)] for s in sms}
part = {s: 0 if sum(a == b for a, b in zip(pat[s], pat[0])) / n > 0.5 else 1 for s in sms}
pl = collections.defaultdict(dict)
for r in csv.DictReader(open(d + '/placement.csv')):
    pl[(int(r['launch']), int(r['cluster']))][int(r['block'])] = int(r['smid'])
plain = pl[(0, 1)]; clus = pl[(1, 2)]
order = [s for s in sorted(part) if part[s] == 0] + [s for s in sorted(part) if part[s] == 1]
vid = {s: v for v, s in enumerate(order)}
P = [vid[plain[b]] for b in range(132)]
C = [vid[clus[2 * c]] // 2 for c in range(66)]
assert sorted(P) == list(range(132)), 'plain table not a permutation'
assert sorted(C) == list(range(66)), 'cluster table not a permutation'
print(','.join(map(str, P)), ','.join(map(str, C)))
print('partition sizes', collections.Counter(part.values()), file=sys.stderr)
