"""PageRank (networkx's ``link_analysis``): ``pagerank`` and the mapping of networkx's ``tol``
and ``max_iter`` to digraph's error bound and round limit (``pagerank_error_bound``,
``pagerank_extra_rounds``).
"""

import math

import networkx as nx
import numpy as np

from ..errors import ConvergenceError
from .common import keyed, run_kwargs
from .convert import as_graph


def pagerank_error_bound(n, alpha, tol):
    """digraph's L1 error bound for networkx's ``tol``: ``n * tol * min(1, alpha / (1 - alpha))``.

    networkx stops when one power iteration moves the vector by less than ``n * tol`` (L1); the
    iteration contracts differences by ``alpha``, so its answer is within
    ``alpha / (1 - alpha) * n * tol`` of the exact one.  The bound returned is never larger than
    that guarantee, nor than ``n * tol``.
    """
    return n * tol * min(1.0, alpha / (1.0 - alpha))


def pagerank_extra_rounds(alpha, bound):
    """Rounds a bulk-synchronous sweep needs at worst to certify ``bound``: the pending residual
    starts at ``1 - alpha`` (L1), shrinks at least by ``alpha`` a round, and the run stops when
    ``2 R / ((1 - alpha) sum(x)) <= bound`` with ``sum(x) >= 1 - alpha``."""
    return max(0, math.ceil(math.log(2.0 / ((1.0 - alpha) * bound)) / math.log(1.0 / alpha)))


def pagerank(G, alpha=0.85, personalization=None, max_iter=100, tol=1.0e-6, nstart=None,
             weight="weight", dangling=None, **backend_kwargs):
    """networkx's ``pagerank`` computed by digraph.

    Parameters are networkx's.  ``tol`` is mapped to digraph's bound on the L1 error of the answer
    as ``n * tol * min(1, alpha / (1 - alpha))``: networkx stops once one power iteration changes
    the vector by less than ``n * tol`` in L1, which guarantees an L1 error below
    ``alpha / (1 - alpha) * n * tol`` (the iteration contracts differences by ``alpha``), so the
    answer returned here is never less accurate than networkx's guarantee, nor than ``n * tol``.
    digraph certifies that bound from its pending residual, whose L1 norm a round shrinks by a
    factor alpha in the worst case, while networkx's step size often shrinks much faster: the
    two round counts are not comparable.  ``max_iter < 1`` raises as in networkx; otherwise
    digraph gets ``max_iter + K`` rounds, ``K = ceil(log(2 / ((1 - alpha) t)) / log(1 / alpha))``
    for the error bound ``t`` (the rounds a bulk-synchronous sweep needs at worst), and the
    exception is raised only when even these do not reach the bound.

    Returns
    -------
    dict
        Node -> PageRank (Python floats), summing to 1.

    Raises
    ------
    networkx.PowerIterationFailedConvergence
        ``max_iter`` < 1, or the round limit was reached before the error bound.
    ZeroDivisionError
        The personalization sums to 0 over the graph's nodes (as networkx).
    NotImplementedError
        ``nstart`` given (``can_run`` says so first).

    ``dangling`` is networkx's: the mass of the nodes without out-edges (out-weight 0) follows it
    instead of the personalization (keys that are not nodes are ignored, as networkx does; a
    dangling dict summing to 0 over the nodes raises ``PowerIterationFailedConvergence``, as
    networkx's NaN iteration does).  It is answered by digraph's Google-matrix power iteration
    (``mode="power"``, the only mode that runs it; ``can_run`` refuses another mode or a GPU),
    with the same error bound.
    """
    import digraph

    if nstart is not None:
        raise NotImplementedError(
            "pagerank: the digraph backend does not support nstart= (digraph starts from its own "
            "state; the answer does not depend on it); call networkx's own pagerank for it")
    kw = run_kwargs("pagerank", backend_kwargs)
    g = as_graph(G, weight)
    n = len(g)
    if n == 0:
        return {}
    if max_iter < 1:
        raise nx.PowerIterationFailedConvergence(max_iter)
    p = None
    if personalization is not None:
        index = g.node_index
        hits = [(index[k], v) for k, v in personalization.items() if g.index(k) is not None]
        p = np.zeros(n, dtype=np.float64)
        if hits:
            idx, vals = zip(*hits)
            p[list(idx)] = np.asarray(vals, dtype=np.float64)
        if not p.sum() > 0:
            raise ZeroDivisionError("personalization sums to 0 over the graph's nodes")
    d = None
    if dangling is not None:
        index = g.node_index
        d = np.zeros(n, dtype=np.float64)
        for k, v in dangling.items():
            if g.index(k) is not None:
                d[index[k]] += float(v)
        if not d.sum() > 0:  # networkx divides by 0 and its NaN iteration never converges
            raise nx.PowerIterationFailedConvergence(max_iter)
    bound = pagerank_error_bound(n, alpha, tol)
    try:
        r = digraph.run(g.graph, "pagerank", alpha=alpha, personalization=p, dangling=d,
                        weights=weight is not None, tol=bound,
                        max_iter=int(max_iter) + pagerank_extra_rounds(alpha, bound), **kw)
    except ConvergenceError:
        raise nx.PowerIterationFailedConvergence(max_iter) from None
    return keyed(g, slice(None), r.values.tolist())
