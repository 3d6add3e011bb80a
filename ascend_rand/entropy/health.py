"""NIST SP 800-90B section 4.4 health tests on raw entropy samples.

Two continuous tests run on every raw sample, in the order the source produced them:

- Repetition Count Test (4.4.1): a run of C identical samples trips it,
  C = 1 + ceil(a / H) for a false-alarm rate alpha = 2**-a and a claimed min-entropy
  of H bits per sample.
- Adaptive Proportion Test (4.4.2): in each window of W consecutive samples
  (W = 1024 for binary samples, 512 otherwise) the first sample's value occurring C
  times trips it, C = 1 + CRITBINOM(W, 2**-H, 1 - alpha), at least 2.

Each test has two cutoffs.  At alpha = 2**-20 (the standard's) a trip is
*intermittent*: the block holding it is discarded and counted.  The failure is
*persistent* (the source is declared failed, every read raises ``EntropyError`` until
``reset()``) when any of these holds:

- a test reaches its strict cutoff, computed the same way at alpha = 2**-40;
- TRIP_LIMIT (8) intermittent trips fall within TRIP_WINDOW (2**16) samples;
- TRIP_LIMIT consecutive blocks are discarded.

The start-up test runs both tests over STARTUP_SAMPLES (1024) samples before any
output; it passes only when none trips.  Runs and windows carry across blocks: the
tests see one continuous sample stream.
"""

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from .._validate import integer
from .errors import EntropyError

ALPHA_LOG2 = 20  # intermittent cutoffs: alpha = 2**-20 per sample (SP 800-90B's value)
STRICT_ALPHA_LOG2 = 40  # persistent cutoffs: alpha = 2**-40
STARTUP_SAMPLES = 1024  # SP 800-90B 4.3: at least 1024 consecutive samples at start-up
TRIP_LIMIT = 8  # this many intermittent trips ...
TRIP_WINDOW = 2**16  # ... within this many samples, or in as many consecutive blocks: persistent
SAMPLE_BITS = (1, 2, 4, 8, 16, 32, 64)  # the widths samples_from_bytes can cut
# The smallest min-entropy claim accepted, in bits per sample.  One 32-byte conditioned
# output hashes 512 / H samples (SP 800-90B 3.1.5.1.2; pool.samples_per_output): 2**19 at
# this floor, a 4 MiB block of 64-bit samples.  Below it the conditioner's input grows
# without bound (H = 1e-300 would need 5e302 samples an output), and for H under about
# 2**-53 the APT's 2**-H rounds to 1, where CRITBINOM is undefined.  The smallest real
# claim is hwrng's at rng_quality 1: 8 / 1024 = 2**-7 bits a byte (sources.py).
MIN_ENTROPY_FLOOR = 2.0**-10
FLOOR_TEXT = "2**-10"

RCT = "repetition count"
APT = "adaptive proportion"


def _positive_entropy(min_entropy, sample_bits):
    if isinstance(min_entropy, bool) or not isinstance(min_entropy, (int, float, np.integer, np.floating)):
        raise TypeError(f"min_entropy must be a number of bits per sample, got {min_entropy!r}")
    h = float(min_entropy)
    if not (MIN_ENTROPY_FLOOR <= h <= sample_bits):
        raise ValueError(
            f"min_entropy must be in [{FLOOR_TEXT}, {sample_bits}] bits per {sample_bits}-bit sample "
            f"(MIN_ENTROPY_FLOOR = {FLOOR_TEXT}), got {min_entropy!r}"
        )
    return h


def _claim(min_entropy):
    # The cutoff formulas' H: positive, and not below the floor (apt_cutoff's 2**-H must
    # stay below 1 in double precision).
    h = float(min_entropy)
    if not h >= MIN_ENTROPY_FLOOR:  # (also refuses NaN)
        raise ValueError(f"min_entropy must be at least {FLOOR_TEXT} bits per sample "
                         f"(MIN_ENTROPY_FLOOR), got {min_entropy!r}")
    return h


def _sample_bits(sample_bits):
    bits = integer(sample_bits, "sample_bits")
    if bits not in SAMPLE_BITS:
        raise ValueError(f"sample_bits must be one of {SAMPLE_BITS}, got {bits}")
    return bits


def rct_cutoff(min_entropy, alpha_log2=ALPHA_LOG2):
    """Repetition Count Test cutoff C = 1 + ceil(alpha_log2 / H) (SP 800-90B 4.4.1).

    A run of C identical samples trips the test.  Computed exactly (Fraction), so
    H = 0.5 gives 41, not a rounding artefact.

    >>> rct_cutoff(8), rct_cutoff(1), rct_cutoff(0.5), rct_cutoff(8, 40)
    (4, 21, 41, 6)
    """
    h = Fraction(_claim(min_entropy))
    return 1 + math.ceil(Fraction(alpha_log2) / h)


def apt_window(sample_bits):
    """Adaptive Proportion Test window: 1024 for binary samples, 512 otherwise (4.4.2).

    >>> apt_window(1), apt_window(8)
    (1024, 512)
    """
    return 1024 if _sample_bits(sample_bits) == 1 else 512


@lru_cache(maxsize=256)
def _critbinom(window, h, alpha_log2):
    # Smallest k with P(X <= k) >= 1 - alpha for X ~ Binomial(window, 2**-h), found as the
    # smallest k whose upper tail P(X > k) is <= alpha: summing the tail from the top
    # keeps tiny probabilities exact to double precision, where 1 - CDF would cancel.
    log_p = -h * math.log(2.0)
    log_q = math.log1p(-(2.0**-h)) if h > 0 else -math.inf
    log_pmf = [
        math.lgamma(window + 1) - math.lgamma(i + 1) - math.lgamma(window - i + 1) + i * log_p + (window - i) * log_q
        for i in range(window + 1)
    ]
    alpha = 2.0**-alpha_log2
    # Walk k down from window - 1: P(X > k) grows by pmf(k + 1); the terms added first are
    # the smallest, so the running sum stays accurate.  The last k whose tail is still
    # <= alpha is the critical value.
    k, tail = window, 0.0
    for i in range(window, 0, -1):
        tail += math.exp(log_pmf[i])  # tail = P(X > i - 1)
        if tail > alpha:
            break
        k = i - 1
    return k


def apt_cutoff(min_entropy, window, alpha_log2=ALPHA_LOG2):
    """Adaptive Proportion Test cutoff C = 1 + CRITBINOM(W, 2**-H, 1 - alpha), at least 2.

    CRITBINOM(W, p, 1 - alpha) is the smallest k with P(Binomial(W, p) <= k) >= 1 - alpha
    (SP 800-90B 4.4.2).  For H large enough that k = 0 the formula gives 1, which the
    test's counter (it starts at 1, the window's first sample) would reach at once; the
    smallest cutoff that tests anything is 2, one repeat of the first value.

    >>> apt_cutoff(8, 512), apt_cutoff(1, 512), apt_cutoff(1, 1024), apt_cutoff(64, 512)
    (13, 311, 589, 2)
    """
    h = _claim(min_entropy)
    w = integer(window, "window")
    if w < 2:
        raise ValueError(f"window must be at least 2, got {w}")
    return max(2, 1 + _critbinom(w, h, alpha_log2))


def samples_from_bytes(data, sample_bits):
    """Cut ``data`` into raw samples of ``sample_bits`` bits, as a uint64 array.

    Multi-byte samples are little-endian (how x86 and aarch64 store the 64-bit register
    RDSEED / RNDRRS fill); sub-byte samples are taken least significant bits first.

    >>> samples_from_bytes(b"\\x01\\x02\\x03\\x04", 16).tolist()
    [513, 1027]
    >>> samples_from_bytes(b"\\xb4", 2).tolist()
    [0, 1, 3, 2]
    """
    bits = _sample_bits(sample_bits)
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, got {type(data).__name__}")
    if (len(data) * 8) % bits:
        raise ValueError(f"{len(data)} bytes do not hold whole {bits}-bit samples")
    raw = np.frombuffer(data, dtype=np.uint8)
    if bits >= 8:
        return raw.view(np.dtype(f"<u{bits // 8}")).astype(np.uint64)
    unpacked = np.unpackbits(raw, bitorder="little").reshape(-1, bits).astype(np.uint64)
    weights = np.left_shift(np.uint64(1), np.arange(bits, dtype=np.uint64))
    return unpacked @ weights


class HealthTests:
    """SP 800-90B 4.4 continuous health tests (RCT and APT) for one entropy source.

    ``startup(samples)`` must pass (return True) before ``check`` accepts blocks.
    ``check(samples)`` returns True when the block may be used, False when a test
    tripped at alpha = 2**-20 (discard the block), and raises ``EntropyError`` on a
    persistent failure (module docstring); after one, every ``check`` and ``startup``
    raises until ``reset()``.

    >>> import numpy as np
    >>> ht = HealthTests("demo", 8, 8.0)
    >>> ht.cutoffs["rct"], ht.cutoffs["apt"], ht.window
    (4, 13, 512)
    >>> ht.startup(np.arange(1024) % 256)
    True
    >>> ht.check(np.array([7, 7, 7, 7, 1, 2]))   # a run of 4 = C: intermittent
    False
    >>> ht.stats["intermittent_failures"], ht.failed
    (1, False)
    """

    def __init__(self, source_name, sample_bits, min_entropy):
        if not isinstance(source_name, str):
            raise TypeError(f"source_name must be a str, got {source_name!r}")
        self.source_name = source_name
        self.sample_bits = _sample_bits(sample_bits)
        self.min_entropy = _positive_entropy(min_entropy, self.sample_bits)
        self.window = apt_window(self.sample_bits)
        self.cutoffs = {
            "rct": rct_cutoff(self.min_entropy, ALPHA_LOG2),
            "apt": apt_cutoff(self.min_entropy, self.window, ALPHA_LOG2),
            "rct_strict": rct_cutoff(self.min_entropy, STRICT_ALPHA_LOG2),
            "apt_strict": apt_cutoff(self.min_entropy, self.window, STRICT_ALPHA_LOG2),
        }
        self.stats = {
            "samples_tested": 0,
            "intermittent_failures": 0,
            "blocks_discarded": 0,
            "persistent_failures": 0,
            "startup_tests": 0,
        }
        self.failure = None  # the EntropyError of a persistent failure, until reset()
        self._clear()

    def _clear(self):
        self.started = False
        self._position = 0  # samples seen since the last reset
        self._rct_value = None
        self._rct_run = 0
        self._apt_carry = np.empty(0, dtype=np.uint64)
        self._apt_tripped = frozenset()
        self._trips = np.empty(0, dtype=np.int64)  # sample indices of recent trips
        self._discard_streak = 0
        self._last_trip_test = None

    @property
    def failed(self):
        """True after a persistent failure, until reset().

        >>> import numpy as np
        >>> ht = HealthTests("demo", 8, 8.0)
        >>> ht.startup(np.zeros(1024, dtype=np.uint8))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ascend_rand.entropy.errors.EntropyError: entropy source 'demo' failed the repetition count test ...
        >>> ht.failed
        True
        """
        return self.failure is not None

    def reset(self):
        """Forget the failure and the running state; startup() must pass again.

        >>> import numpy as np
        >>> ht = HealthTests("demo", 8, 8.0)
        >>> ht.startup(np.zeros(1024, dtype=np.uint8))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ascend_rand.entropy.errors.EntropyError: entropy source 'demo' failed the repetition count test ...
        >>> ht.reset()
        >>> ht.failed, ht.started
        (False, False)
        >>> ht.startup(np.arange(1024) % 256)
        True
        """
        self.failure = None
        self._clear()

    def restart(self):
        """Start on a new sample stream: runs, windows and the start-up test forgotten, as
        for a new instance, but the counters and a persistent failure kept (``reset()``
        forgets the failure too).  A forked child's pool calls it: the child's samples do
        not continue the parent's, and the parent may have forked mid-block.

        >>> import numpy as np
        >>> ht = HealthTests("demo", 8, 8.0)
        >>> ht.startup(np.arange(1024) % 256)
        True
        >>> ht.restart()
        >>> ht.started, ht.stats["startup_tests"]
        (False, 1)
        """
        self._clear()

    def _samples(self, samples):
        x = np.asarray(samples)
        if x.ndim != 1:
            raise ValueError(f"samples must be a 1-D array, got shape {x.shape}")
        if x.size and x.dtype.kind not in "ui":
            raise TypeError(f"samples must be integers, got dtype {x.dtype}")
        if x.size and (x.min() < 0 or (self.sample_bits < 64 and int(x.max()) >> self.sample_bits)):
            raise ValueError(f"samples must be in [0, 2**{self.sample_bits})")
        return x.astype(np.uint64, copy=False)

    def raise_if_failed(self):
        """Raise the persistent failure's ``EntropyError`` again, if there is one.

        >>> import numpy as np
        >>> ht = HealthTests("demo", 8, 8.0)
        >>> ht.raise_if_failed()  # nothing failed: no error
        >>> try:
        ...     ht.startup(np.zeros(1024, dtype=np.uint8))
        ... except Exception:
        ...     pass
        >>> ht.raise_if_failed()  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ascend_rand.entropy.errors.EntropyError: entropy source 'demo' failed the repetition count test ...
        """
        if self.failure is not None:
            raise EntropyError(
                str(self.failure),
                source=self.source_name,
                test=self.failure.test,
                sample_index=self.failure.sample_index,
            )

    def _rct(self, x, base):
        # Runs of identical samples; the first run continues the previous block's last run.
        n = x.size
        starts = np.concatenate(([0], np.flatnonzero(x[1:] != x[:-1]) + 1))
        lengths = np.diff(np.append(starts, n))
        prior = np.zeros(starts.size, dtype=np.int64)
        if self._rct_value is not None and x[0] == self._rct_value:
            prior[0] = self._rct_run
        total = lengths + prior
        run_start = base + starts - prior  # sample index of each run's first sample
        trips, strict = [], None
        for key in ("rct", "rct_strict"):
            c = self.cutoffs[key]
            # A run trips once, at the sample where its count reaches C.
            hit = (total >= c) & (prior < c)
            pos = run_start[hit] + c - 1
            if key == "rct":
                trips = pos
            elif pos.size:
                strict = int(pos[0])
        self._rct_value = x[-1]
        self._rct_run = int(total[-1])
        return trips, strict

    def _apt(self, x, base):
        # Windows of W samples from the stream's start.  The last one may be incomplete:
        # it is tested on what it holds so far (a trip fires as soon as the count reaches C)
        # and completed by the next block; _apt_tripped remembers which cutoffs it already
        # tripped, so that no window trips the same cutoff twice.
        y = np.concatenate((self._apt_carry, x))
        first = base - self._apt_carry.size
        w = self.window
        m, r = divmod(y.size, w)
        inherited = self._apt_tripped  # cutoffs the window starting at `first` already tripped
        tripped_now = set(inherited) if m == 0 else set()
        if m:
            full = y[: m * w].reshape(m, w)
            matches = full == full[:, :1]
            counts = matches.sum(axis=1)
        if r:
            part = y[m * w :]
            part_counts = np.cumsum(part == part[0])
        self._apt_carry = y[m * w :].copy()
        trips, strict = np.empty(0, dtype=np.int64), None
        for key in ("apt", "apt_strict"):
            c = self.cutoffs[key]
            pos = []
            if m:
                rows = np.flatnonzero(counts >= c)
                if key in inherited:
                    rows = rows[rows != 0]
                if rows.size:
                    # The test fires at the sample where the running count reaches C.
                    at = np.argmax(np.cumsum(matches[rows], axis=1) >= c, axis=1)
                    pos.extend((first + rows * w + at).tolist())
            if r and part_counts[-1] >= c:
                if not (m == 0 and key in inherited):
                    pos.append(first + m * w + int(np.argmax(part_counts >= c)))
                tripped_now.add(key)
            if key == "apt":
                trips = np.asarray(pos, dtype=np.int64)
            elif pos:
                strict = int(min(pos))
        self._apt_tripped = frozenset(tripped_now)
        return trips, strict

    def _run(self, x):
        """Both tests over x; returns (test, sample index) of a persistent failure, or the trip count."""
        base = self._position
        self._position += x.size
        self.stats["samples_tested"] += int(x.size)
        if x.size == 0:
            return None, 0
        rct_trips, rct_strict = self._rct(x, base)
        apt_trips, apt_strict = self._apt(x, base)
        stricts = [(p, t) for p, t in ((rct_strict, RCT), (apt_strict, APT)) if p is not None]
        if stricts:
            p, t = min(stricts, key=lambda e: e[0])  # on a tie the RCT, listed first
            return (t, p, f"reached its strict cutoff (alpha = 2**-{STRICT_ALPHA_LOG2})"), 0
        trips = np.concatenate((np.asarray(rct_trips, dtype=np.int64), np.asarray(apt_trips, dtype=np.int64)))
        if trips.size == 0:
            return None, 0
        self._last_trip_test = " and ".join(t for t, a in ((RCT, rct_trips), (APT, apt_trips)) if len(a))
        # The repeated-trip rule: TRIP_LIMIT trips within TRIP_WINDOW samples.
        recent = np.sort(np.concatenate((self._trips, trips)))
        recent = recent[recent > self._position - 1 - TRIP_WINDOW]
        self._trips = recent[-TRIP_LIMIT:]
        if recent.size >= TRIP_LIMIT:
            spans = recent[TRIP_LIMIT - 1 :] - recent[: recent.size - TRIP_LIMIT + 1]
            close = np.flatnonzero(spans < TRIP_WINDOW)
            if close.size:
                p = int(recent[close[0] + TRIP_LIMIT - 1])
                test = RCT if p in set(np.asarray(rct_trips).tolist()) else APT
                return (test, p, f"tripped {TRIP_LIMIT} times within {TRIP_WINDOW} samples"), trips.size
        return None, int(trips.size)

    def _fail(self, test, index, why):
        self.stats["persistent_failures"] += 1
        self.started = False
        self.failure = EntropyError(
            f"entropy source {self.source_name!r} failed the {test} test at sample {index}: {why}; "
            "no bytes are produced until reset()",
            source=self.source_name,
            test=test,
            sample_index=index,
        )
        raise self.failure

    def startup(self, samples):
        """The start-up test over at least 1024 samples; True when they pass.

        False means a test tripped at alpha = 2**-20: run startup() again on fresh
        samples.  A persistent failure raises ``EntropyError``.

        >>> import numpy as np
        >>> ht = HealthTests("demo", 8, 8.0)
        >>> ht.startup(np.arange(1024) % 256), ht.started
        (True, True)
        """
        self.raise_if_failed()
        x = self._samples(samples)
        if x.size < STARTUP_SAMPLES:
            raise ValueError(f"the start-up test needs at least {STARTUP_SAMPLES} samples, got {x.size}")
        self.stats["startup_tests"] += 1
        persistent, trips = self._run(x)
        if persistent:
            self._fail(*persistent)
        if trips:
            self.stats["intermittent_failures"] += trips
            return self._discarded()
        self.started = True
        self._discard_streak = 0
        return True

    def _discarded(self):
        self.stats["blocks_discarded"] += 1
        self._discard_streak += 1
        if self._discard_streak >= TRIP_LIMIT:
            self._fail(self._last_trip_test, self._position - 1, f"{TRIP_LIMIT} consecutive blocks were discarded")
        return False

    def check(self, samples):
        """Test one block of raw samples: True = use it, False = discard it (intermittent).

        Raises ``EntropyError`` on a persistent failure, after one, and before the
        start-up test has passed.

        >>> import numpy as np
        >>> ht = HealthTests("demo", 8, 8.0)
        >>> ht.check(np.arange(256))
        Traceback (most recent call last):
        ...
        ascend_rand.entropy.errors.EntropyError: entropy source 'demo': the start-up test has not passed
        >>> ht.startup(np.arange(1024) % 256)
        True
        >>> ht.check(np.arange(256)), ht.stats["samples_tested"]
        (True, 1280)
        """
        self.raise_if_failed()
        if not self.started:
            raise EntropyError(
                f"entropy source {self.source_name!r}: the start-up test has not passed",
                source=self.source_name,
                test="start-up",
            )
        x = self._samples(samples)
        persistent, trips = self._run(x)
        if persistent:
            self.stats["intermittent_failures"] += trips
            self._fail(*persistent)
        if trips:
            self.stats["intermittent_failures"] += trips
            return self._discarded()
        self._discard_streak = 0
        return True
