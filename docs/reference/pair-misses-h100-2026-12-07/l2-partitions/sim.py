import csv, gzip, collections, statistics as st, sys
d = sys.argv[1]
lat = collections.defaultdict(dict)
for r in csv.DictReader(gzip.open(d + '/latency.csv.gz', 'rt')):
    if r['pass'] == '0': lat[int(r['sm'])][int(r['line'])] = int(r['cycles'])
sms = sorted(lat); n = len(lat[0])
pat = {s: [1 if lat[s][i] > st.median(lat[s].values()) else 0 for i in range(n)] for s in sms}
part = {s: 0 if sum(a == b for a, b in zip(pat[s], pat[0])) / n > 0.5 else 1 for s in sms}
pl = collections.defaultdict(dict)
for r in csv.DictReader(open(d + '/placement.csv')):
    pl[(int(r['launch']), int(r['cluster']))][int(r['block'])] = int(r['smid'])
plain = pl[(0, 1)]; clus = pl[(1, 2)]
def walk(paired, n_blocks=32, m_blocks=256, group=8, waves=3, plain_map=plain, clus_map=clus, order=None):
    # per wave: operand tile -> set of partitions using it
    res = []
    for w in range(waves):
        A = collections.defaultdict(set); B = collections.defaultdict(set)
        for b in range(132):
            if paired:
                c, r = b // 2, b % 2
                stile = w * 66 + (order[c] if order else c)
                per = (m_blocks // 2) * group
                stripe, within = divmod(stile, per)
                sm, sn = divmod(within, group)
                m, nn = 2 * sm + r, stripe * group + sn
                p = part[clus_map[b]]
            else:
                t = w * 132 + (order[b] if order else b)
                per = m_blocks * group
                stripe, within = divmod(t, per)
                m, sn = divmod(within, group)
                nn = stripe * group + sn
                p = part[plain_map[b]]
            A[m].add(p); B[nn].add(p)
        both_a = sum(len(v) == 2 for v in A.values()); both_b = sum(len(v) == 2 for v in B.values())
        res.append((len(A), both_a, len(B), both_b))
    return res
print('partition sizes', collections.Counter(part.values()))
for name, paired in (('unpaired', False), ('B pairs', True)):
    r = walk(paired)
    print(name, 'per wave (A tiles, A tiles in both partitions, B tiles, B tiles in both):', r)
# bytes per K block: A tile 128x128 = 16 KB, B tile 192x128 = 24 KB
def cost(r):
    a, ab, b, bb = r
    return (ab + 0.5 * (a - ab)) * 16 + (bb + 0.5 * (b - bb)) * 24
for name, paired in (('unpaired', False), ('B pairs', True)):
    print(name, 'expected fabric KB per K block per wave:', [cost(x) for x in walk(paired)])
# The walk of variant-partwalk.patch: the CTA on SM s takes the tiles of number vid[s] (its SM's
# partition first, then the SM's rank in it); a pair takes vid[s] / 2.
order = [s for s in sorted(part) if part[s] == 0] + [s for s in sorted(part) if part[s] == 1]
vid = {s: v for v, s in enumerate(order)}
by_block = [vid[plain[b]] for b in range(132)]
by_cluster = [vid[clus[2 * c]] // 2 for c in range(66)]
for name, paired, o in (('unpaired, by partition', False, by_block), ('B pairs, by partition', True, by_cluster)):
    r = walk(paired, order=o)
    print(name, r, 'expected fabric KB per K block per wave:', [cost(x) for x in r])
