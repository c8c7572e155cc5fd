import csv, gzip, sys, collections, statistics as st
d = sys.argv[1]
lat = collections.defaultdict(dict)
for r in csv.DictReader(gzip.open(d + '/latency.csv.gz', 'rt')):
    lat[(int(r['sm']), int(r['pass']))][int(r['line'])] = int(r['cycles'])
sms = sorted({s for s, p in lat})
n = len(lat[(0, 0)])
first = {s: [lat[(s, 0)][i] for i in range(n)] for s in sms}
second = {s: [lat[(s, 1)][i] for i in range(n)] for s in sms}
print('first-touch mean/median', st.mean(first[0]), st.median(first[0]), 'second', st.mean(second[0]), st.median(second[0]))
# classify lines by SM 0's first-touch latency: fast or slow
med0 = st.median(first[0])
def pattern(s, pas=first):
    m = st.median(pas[s]); return [1 if x > m else 0 for x in pas[s]]
p0 = pattern(0)
agree = {s: sum(a == b for a, b in zip(pattern(s), p0)) / n for s in sms}
grp = {s: (0 if agree[s] > 0.5 else 1) for s in sms}
print('agreement with SM 0 (first touch):', ' '.join('%d:%.2f' % (s, agree[s]) for s in sms))
print('group 0:', [s for s in sms if grp[s] == 0])
print('group 1:', [s for s in sms if grp[s] == 1])
p0b = pattern(0, second)
agree2 = {s: sum(a == b for a, b in zip(pattern(s, second), p0b)) / n for s in sms}
print('agreement with SM 0 (second touch):', ' '.join('%d:%.2f' % (s, agree2[s]) for s in sms))
pl = collections.defaultdict(dict)
for r in csv.DictReader(open(d + '/placement.csv')):
    pl[(int(r['launch']), int(r['cluster']))][int(r['block'])] = int(r['smid'])
for (l, c), m in sorted(pl.items()):
    seq = [m[b] for b in range(len(m))]
    print('launch %d cluster %d: groups by block:' % (l, c), ''.join(str(grp.get(x, '?')) for x in seq))
    print('   smids:', seq[:40])
