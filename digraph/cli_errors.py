"""How the ``digraph`` command line (:mod:`digraph.cli`) words an error: :func:`cli_spelling`
(the library's parameter names as the command line's options) and :func:`first_line` (the one
line it prints, escaped)."""

import re


#: the library's parameters that are options of the command line
_OPTIONS = {"mode": "--mode", "device": "--device", "threads": "--threads",
            "max_iter": "--max-iter", "tol": "--tol", "cache": "--cache", "source": "--source",
            "seeds": "--seeds", "alpha": "--alpha", "beta": "--beta",
            "num_vertices": "--num-vertices", "format": "--format", "header": "--header"}
_PARAM = re.compile(r"(?<![\w.-])(" + "|".join(_OPTIONS) + r")="
                    r"(?:'([^'\n]*)'|\"([^\"\n]*)\"|([^\s,;:()\[\]'\"]*))")
_REQUIRED = re.compile(r"\bparameter '(" + "|".join(_OPTIONS) + r")'")
#: phrases of the file readers' messages that name a parameter (after the file's name and line)
_READER_HINTS = (("or format='csv')", "or --format csv)"),
                 ("or format='mtx')", "or --format mtx)"),
                 ("pass format= one of", "pass --format, one of"),
                 ("given by num_vertices=", "given by --num-vertices "),
                 ("(num_vertices=", "(--num-vertices "))


def cli_spelling(error):
    """The message of a library error as the command line's options spell it.

    The library names its parameters in Python (``mode='peel'``, ``cache=``, ``parameter
    'source' is required``); from the command line they read ``--mode peel``, ``--cache``,
    ``--source is required``.  Parameter errors (InvalidParameterError, NotAvailableError) are
    translated whole; a file reader's error only in the phrases it appends after the file's name
    and line (the quoted text of a line is left as it is); any other error is unchanged.

    Parameters
    ----------
    error : BaseException

    Returns
    -------
    str
    """
    from .errors import GraphFormatError, InvalidParameterError, NotAvailableError
    text = str(error)
    if isinstance(error, GraphFormatError):
        for python, option in _READER_HINTS:
            at = text.find(python) if python.startswith("given") else text.rfind(python)
            if at >= 0:
                text = text[:at] + option + text[at + len(python):]
        return text
    if not isinstance(error, (InvalidParameterError, NotAvailableError)):
        return text

    def option(m):
        name = _OPTIONS[m.group(1)]
        value = next((v for v in m.group(2, 3, 4) if v is not None), "")
        if value == "None":
            return f"no {name}"
        return f"{name} {value}" if value else name
    text = _PARAM.sub(option, text)
    return _REQUIRED.sub(lambda m: _OPTIONS[m.group(1)], text)


def first_line(e, default):
    """The first line of an error's message, :func:`~.preprocess.cli.escaped` (it may
    quote a file's content or name)."""
    from .preprocess.cli import escaped
    return escaped(str(e).splitlines()[0]) if str(e) else default
