"""The argument check both MindSpore front-end modules share (no MindSpore import here)."""

from ..generator import Generator


def checked_generator(generator, what):
    """``generator`` if it is an ascend_rand.Generator or None; TypeError naming it otherwise.

    >>> checked_generator(None, "Dropout") is None
    True
    """
    if generator is None or isinstance(generator, Generator):
        return generator
    raise TypeError(
        f"{what}: generator must be an ascend_rand.Generator or None (ascend_rand's default "
        f"Generator), got {type(generator).__name__}")
