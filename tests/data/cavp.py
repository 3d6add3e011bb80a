"""Reading the NIST CAVP known-answer files kept in tests/data (``*.rsp``).

Each test vector starts with a ``File = ...`` line naming the CAVP file it
came from; the ``Key = value`` lines after it are its fields.  Lines starting
with ``#`` are the citations.
"""

from pathlib import Path

DATA = Path(__file__).resolve().parent


def cavp_vectors(name):
    """The vectors of ``tests/data/<name>``: a list of {field: value} dicts, in order."""
    blocks, cur = [], None
    for line in (DATA / name).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = (part.strip() for part in line.partition("="))
        if key == "File":
            cur = {"File": value}
            blocks.append(cur)
        else:
            cur[key] = value
    return blocks
