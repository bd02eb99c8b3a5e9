import sys, time, numpy as np
sys.path.insert(0, 'benchmarks')
import graphs, digraph, harness, peers
g = graphs.load(sys.argv[1])
anderson = harness.settings_of("PowerSettings.accelerator=anderson")
def once(**kw):
    t0 = time.perf_counter(); r = digraph.run(g, 'pagerank', tol=1e-8, **kw)
    return 1e3 * (time.perf_counter() - t0), r.stats
def alt(tag):
    a, b = [], []
    for i in range(7):
        a.append(once()[0]); b.append(once(mode='power', settings=anderson)[0])
    print(tag, 'default', [round(x) for x in a], 'power', [round(x) for x in b], flush=True)
once(); once(mode='power', settings=anderson)
alt('alone')
ans, build = peers.PEERS['scipy-power']
f = build(g, {}, 1e-8); f()
alt('after scipy')
ans, build = peers.PEERS['igraph-prpack']
f = build(g, {}, 1e-8); f()
alt('after prpack')
s = once()[1]; print(s['route']['code'], s.get('power'))
