"""The CPU path engine (``mode="path"`` / ``"path-nopriority"``, state ``"arc"``) in parts, entered
through :mod:`digraph.dispatch.paths` (which keeps :func:`~digraph.dispatch.paths.solve` and
:data:`~digraph.dispatch.paths.DEFAULT` and re-exports the rest): :mod:`.settings` (the settings
class and the checks of the options), :mod:`.schedule` (the layer schedule, the path
representation and the counters), :mod:`.linear` (the linear-system driver) and :mod:`.monotone`
(the min/max driver)."""
