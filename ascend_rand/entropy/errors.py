"""The error every entropy component raises when it must not hand out bytes."""


class EntropyError(RuntimeError):
    """An entropy source failed its health tests (or could not be read): no bytes come out.

    ``source`` names the source, ``test`` the health test that failed (None when the
    source itself raised), ``sample_index`` the raw sample at which the test fired
    (counted from the last start-up test), or None.

    >>> e = EntropyError("stuck", source="rdseed", test="repetition count", sample_index=5)
    >>> isinstance(e, RuntimeError), e.source, e.test
    (True, 'rdseed', 'repetition count')
    """

    def __init__(self, message, *, source=None, test=None, sample_index=None):
        super().__init__(message)
        self.source = source
        self.test = test
        self.sample_index = sample_index
