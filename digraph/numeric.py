"""Numeric helpers every layer may use (kernels, engines, drivers): a leaf module, importing
nothing of digraph.

``neumaier_add`` is one step of Neumaier's compensated summation (Neumaier, "Rundungsfehleranalyse
einiger Verfahren zur Summation endlicher Summen", ZAMM 54, 1974): the running sum ``acc`` and
its compensation ``comp`` absorb ``term`` so that ``acc + comp`` carries the rounding error the
plain sum would lose, also when ``term`` is larger than ``acc`` (where Kahan's step fails).
"""

from numba import njit

__all__ = ["neumaier_add"]


@njit(cache=True, nogil=True, inline="always")
def neumaier_add(acc, comp, term):
    """One step of Neumaier's compensated sum: (new sum, new compensation); the total is
    ``acc + comp`` at the end."""
    t = acc + term
    if abs(acc) >= abs(term):
        comp += (acc - t) + term
    else:
        comp += (term - t) + acc
    return t, comp
