"""Raw entropy sources: CPU instructions, the Linux hw_random device, the OS CSPRNG.

Each source is an object with four members that the entropy pool reads:

- ``name``: how :func:`sources` and :func:`resolve` call it;
- ``sample_bits``: the width of one raw sample, one of 1, 2, 4, 8, 16, 32, 64
  (health.SAMPLE_BITS); multi-byte samples are little-endian, sub-byte samples
  packed least significant bits first (health.samples_from_bytes cuts them);
- ``min_entropy``: the claimed min-entropy of one sample, in bits
  (``2**-10 <= min_entropy <= sample_bits``, health.MIN_ENTROPY_FLOOR); the
  health-test cutoffs and the conditioner's input size are computed from it;
- ``read(n) -> bytes``: exactly ``n`` raw bytes holding whole samples (``n`` a
  multiple of ``sample_bits // 8`` for multi-byte samples).

plus ``available`` and ``reason`` (why not, or None) and ``seed_grade``: False
for a deterministic generator's output (RDRAND, getrandom) whose samples are
not fresh entropy each.  A failed read raises :class:`SourceError` (an
EntropyError, so a RuntimeError) naming the source; nothing is ever returned
short or padded.

Claimed min-entropy per sample (justified in docs/security.md, "Sources"):
``rdseed`` 32 of 64 bits (half of Intel's "full entropy"; SP 800-90B
estimators here: 7.25 bits/byte); ``rdrand`` 0.125 of 64 (DRBG output: only
its reseeds count, 128 bits per 1024 outputs); ``rndrrs`` 32 of 64;
``hwrng`` 8 * min(rng_quality / 1024, 1/2) bits per byte (4 when unreported);
``getrandom`` 8 per byte (computational: the kernel CSPRNG, as ``secrets``);
``npu`` absent (no CANN API exposes the NPU's TRNG; :class:`NpuSource` is the
extension point).
"""

from __future__ import annotations

import abc
import numbers
import os

import numpy as np

from .. import _extension
from .errors import EntropyError
from .health import FLOOR_TEXT, MIN_ENTROPY_FLOOR, SAMPLE_BITS

__all__ = [
    "SourceError", "EntropySource", "RdseedSource", "RdrandSource", "RndrrsSource",
    "HwrngSource", "GetrandomSource", "NpuSource", "sources", "resolve", "register",
    "AUTO_ORDER",
]

# What source="auto" tries, best first.  RDRAND is never chosen automatically:
# it is a DRBG's output (ask for it by name).
AUTO_ORDER = ("rdseed", "rndrrs", "hwrng", "getrandom")

HWRNG_DEVICE = "/dev/hwrng"
HWRNG_SYSFS = "/sys/class/misc/hw_random"


class SourceError(EntropyError):
    """An entropy source is absent or failed to deliver; ``source`` names it.

    >>> e = SourceError("rdseed: no random value after 1024 tries", source="rdseed")
    >>> isinstance(e, EntropyError), e.source, e.test
    (True, 'rdseed', None)
    """

    def __init__(self, message, *, source=None):
        super().__init__(message, source=source)


def _native():
    """The compiled core's hardware-entropy functions, or (None, why not)."""
    module = _extension.module
    if module is None:
        return None, _extension.unavailable_reason()
    if not hasattr(module, "hw_entropy_available"):
        return None, ("the installed native core predates hardware entropy support "
                      "(rebuild ascend_rand)")
    return module, None


_HW_INFO = [None, None]  # [module, its hw_entropy_available()]: CPU features never change


def _hw_info(module):
    """``module.hw_entropy_available()``, asked once per module object (reads are hot)."""
    if _HW_INFO[0] is not module:
        _HW_INFO[:] = [module, module.hw_entropy_available()]
    return _HW_INFO[1]


def _sample_bytes(sample_bits):
    """Bytes that hold a whole number of samples: sub-byte samples pack into every byte."""
    return max(1, sample_bits // 8)


def _check_count(name, n, sample_bits):
    """``n`` as an int, or a TypeError/ValueError naming the source and the value."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name}.read(n): n must be an int, got {type(n).__name__} {n!r}")
    n = int(n)
    size = _sample_bytes(sample_bits)
    if n < 0:
        raise ValueError(f"{name}.read(n): n must be >= 0, got {n}")
    if n % size:
        raise ValueError(f"{name}.read(n): n = {n} is not a multiple of the sample size "
                         f"({size} bytes for {sample_bits}-bit samples)")
    return n


class EntropySource(abc.ABC):
    """Base of the built-in sources; subclass it for your own (see :class:`NpuSource`).

    A subclass sets ``name``, ``sample_bits``, ``min_entropy`` (and
    ``seed_grade`` when its output is a deterministic generator's) and
    implements ``_read(n)``; ``read`` checks ``n`` and availability first.

    >>> src = GetrandomSource()
    >>> len(src.read(16)), src.sample_bits
    (16, 8)
    """

    name = ""
    sample_bits = 8
    min_entropy = 0.0
    seed_grade = True

    @property
    def available(self):
        """Whether this machine offers the source now.

        >>> from ascend_rand.entropy import NpuSource, resolve
        >>> resolve("getrandom").available, NpuSource().available
        (True, False)
        """
        return self.reason is None

    @property
    def reason(self):
        """Why the source is absent (a sentence), or None when it is available.

        >>> from ascend_rand.entropy import resolve
        >>> print(resolve("getrandom").reason)
        None
        """
        return None

    def read(self, n):
        """``n`` raw bytes (whole samples) from the source; SourceError if it cannot.

        >>> from ascend_rand.entropy import NpuSource, resolve
        >>> len(resolve("getrandom").read(32))
        32
        >>> NpuSource().read(4)
        Traceback (most recent call last):
        ...
        ascend_rand.entropy.sources.SourceError: entropy source 'npu' is not available: no CANN API exposes the NPU's TRNG
        """
        n = _check_count(self.name, n, self.sample_bits)
        why = self.reason
        if why is not None:
            raise SourceError(f"entropy source '{self.name}' is not available: {why}",
                              source=self.name)
        if n == 0:
            return b""
        data = self._read(n)
        if not isinstance(data, bytes) or len(data) != n:
            got = f"{len(data)} bytes" if isinstance(data, (bytes, bytearray)) else repr(type(data))
            raise SourceError(f"entropy source '{self.name}' returned {got}, expected {n} bytes",
                              source=self.name)
        return data

    @abc.abstractmethod
    def _read(self, n):
        """Exactly ``n`` bytes (n > 0, whole samples) from the available source."""

    def describe(self):
        """A dict of what :func:`sources` reports about this source.

        >>> from ascend_rand.entropy import resolve
        >>> resolve("getrandom").describe()
        {'available': True, 'reason': None, 'sample_bits': 8, 'min_entropy': 8.0, 'seed_grade': False, 'call': 'os.getrandom'}
        """
        return {"available": self.available, "reason": self.reason,
                "sample_bits": self.sample_bits, "min_entropy": self.min_entropy,
                "seed_grade": self.seed_grade}

    def __repr__(self):
        state = "available" if self.available else f"absent: {self.reason}"
        return (f"<{type(self).__name__} '{self.name}' {self.sample_bits}-bit samples, "
                f"{self.min_entropy} bits claimed, {state}>")


class _CpuInstructionSource(EntropySource):
    """A 64-bit CPU instruction reached through the native core (``_native.<fill>``)."""

    sample_bits = 64
    _fill = ""        # the _native function that fills a uint64 array
    _instruction = ""  # the name hw_entropy_available() reports it under
    _cpu_lacks = ""

    def __init__(self, max_retries=None):
        if max_retries is not None and (isinstance(max_retries, bool)
                                        or not isinstance(max_retries, numbers.Integral)
                                        or max_retries < 1):
            raise ValueError(f"{self.name}: max_retries must be an int >= 1, got {max_retries!r}")
        self.max_retries = None if max_retries is None else int(max_retries)

    @property
    def reason(self):
        module, why = _native()
        if module is None:
            return why
        if not _hw_info(module)[self._instruction]:
            return self._cpu_lacks
        return None

    def _read(self, n):
        module, _ = _native()
        words = np.empty(n // 8, dtype=np.uint64)
        fill = getattr(module, self._fill)
        try:
            if self.max_retries is None:
                fill(words)
            else:
                fill(words, self.max_retries)
        except RuntimeError as exc:
            raise SourceError(str(exc), source=self.name) from exc
        return words.astype("<u8", copy=False).tobytes()

    def describe(self):
        info = super().describe()
        module, _ = _native()
        if module is not None:
            info["max_retries"] = (self.max_retries if self.max_retries is not None
                                   else _hw_info(module)[self._instruction + "_retries"])
        return info


class RdseedSource(_CpuInstructionSource):
    """x86 RDSEED: conditioned seed-grade output of Intel/AMD's hardware entropy source.

    Each sample retries with PAUSE up to ``max_retries`` times (default 1024)
    before SourceError.

    >>> src = RdseedSource()
    >>> src.sample_bits, src.min_entropy, src.seed_grade
    (64, 32.0, True)
    """

    name = "rdseed"
    min_entropy = 32.0
    _fill = "rdseed64"
    _instruction = "rdseed"
    _cpu_lacks = ("this CPU does not offer RDSEED (CPUID leaf 7, EBX bit 18 is clear), or the "
                  "kernel disabled it as unreliable (no 'rdseed' in /proc/cpuinfo's flags)")


class RdrandSource(_CpuInstructionSource):
    """x86 RDRAND: output of the CPU's AES CTR_DRBG (``seed_grade=False``).

    Retries up to 10 times per sample (Intel's bound for a CPU fault).  Its
    claim counts only the reseeds (128 bits per 1024 samples).

    >>> src = RdrandSource()
    >>> src.sample_bits, src.min_entropy, src.seed_grade
    (64, 0.125, False)
    """

    name = "rdrand"
    min_entropy = 0.125
    seed_grade = False
    _fill = "rdrand64"
    _instruction = "rdrand"
    _cpu_lacks = ("this CPU does not offer RDRAND (CPUID leaf 1, ECX bit 30 is clear), or the "
                  "kernel disabled it as unreliable (no 'rdrand' in /proc/cpuinfo's flags)")


class RndrrsSource(_CpuInstructionSource):
    """aarch64 RNDRRS (FEAT_RNG): a DRBG reseeded from the true random source per read.

    >>> RndrrsSource().min_entropy
    32.0
    """

    name = "rndrrs"
    min_entropy = 32.0
    _fill = "rndrrs64"
    _instruction = "rndrrs"
    _cpu_lacks = ("this CPU or kernel does not offer RNDRRS (not aarch64, or AT_HWCAP2 "
                  "lacks HWCAP2_RNG)")


def _read_text(path):
    try:
        with open(path) as fh:
            return fh.read().strip()
    except OSError:
        return None


class HwrngSource(EntropySource):
    """/dev/hwrng: whichever Linux hw_random driver is current (virtio-rng, hisi-trng, tpm...).

    The claim comes from the driver's ``rng_quality`` (capped at half: see the
    module docstring).  Reads block until the device has produced the bytes.

    >>> HwrngSource().sample_bits
    8
    """

    name = "hwrng"
    sample_bits = 8
    # Bits per byte when the kernel does not report rng_quality: the same
    # half-width margin as the CPU sources.
    DEFAULT_MIN_ENTROPY = 4.0

    def __init__(self, device=HWRNG_DEVICE, sysfs=HWRNG_SYSFS):
        self.device = device
        self.sysfs = sysfs

    @property
    def driver(self):
        """The current driver's name (rng_current), or None when none is bound or unknown."""
        current = _read_text(os.path.join(self.sysfs, "rng_current"))
        return None if current in (None, "", "none") else current

    @property
    def quality(self):
        """The driver's rng_quality (entropy bits per 1024 bits), or None when unreadable."""
        text = _read_text(os.path.join(self.sysfs, "rng_quality"))
        try:
            return int(text) if text is not None else None
        except ValueError:
            return None

    @property
    def min_entropy(self):
        quality = self.quality
        if quality is None:
            return self.DEFAULT_MIN_ENTROPY
        return 8.0 * min(quality / 1024.0, 0.5)

    @property
    def reason(self):
        if not os.path.exists(self.device):
            return f"{self.device} does not exist (no hw_random driver loaded)"
        if _read_text(os.path.join(self.sysfs, "rng_current")) == "none":
            return f"no hw_random driver is bound ({self.sysfs}/rng_current is 'none')"
        if self.quality == 0:
            return (f"the driver {self.driver!r} claims no entropy "
                    f"({self.sysfs}/rng_quality is 0)")
        if not os.access(self.device, os.R_OK):
            return f"{self.device} is not readable by this user (it is usually root-only)"
        return None

    def _read(self, n):
        chunks, got = [], 0
        try:
            with open(self.device, "rb", buffering=0) as fh:
                while got < n:
                    chunk = fh.read(n - got)
                    if not chunk:
                        raise SourceError(f"entropy source 'hwrng': {self.device} returned "
                                          f"end of file after {got} of {n} bytes",
                                          source=self.name)
                    chunks.append(chunk)
                    got += len(chunk)
        except OSError as exc:
            raise SourceError(f"entropy source 'hwrng': reading {self.device} failed: "
                              f"{exc}", source=self.name) from exc
        return b"".join(chunks)

    def describe(self):
        info = super().describe()
        info.update(device=self.device, driver=self.driver, rng_quality=self.quality)
        return info


class GetrandomSource(EntropySource):
    """The OS CSPRNG (``os.getrandom``, else ``os.urandom``): always present; the fallback.

    >>> src = GetrandomSource()
    >>> src.available, src.seed_grade, src.min_entropy
    (True, False, 8.0)
    """

    name = "getrandom"
    sample_bits = 8
    min_entropy = 8.0
    seed_grade = False

    def _read(self, n):
        getrandom = getattr(os, "getrandom", None)
        if getrandom is None:
            return os.urandom(n)
        chunks, got = [], 0
        while got < n:  # getrandom(2) returns at most 32 MiB - 1 bytes per call
            chunk = getrandom(n - got)
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def describe(self):
        info = super().describe()
        info["call"] = "os.getrandom" if hasattr(os, "getrandom") else "os.urandom"
        return info


class NpuSource(EntropySource):
    """Extension point for an NPU's true random number generator.

    No CANN API exposes the NPU's TRNG today, so this source is absent.  Where
    a driver does expose one, subclass this class, override ``reason`` (None
    when present), ``_read(n)``, ``sample_bits`` and ``min_entropy`` (with
    your justification), and :func:`register` an instance: ``resolve("npu")``
    then returns it.

    >>> class MyNpuTrng(NpuSource):
    ...     min_entropy = 4.0
    ...     @property
    ...     def reason(self):
    ...         return None
    ...     def _read(self, n):
    ...         return os.urandom(n)  # a real subclass calls the device here
    >>> _ = register(MyNpuTrng(), replace=True)
    >>> resolve("npu").read(4).__len__()
    4
    >>> _ = register(NpuSource(), replace=True)  # back to the built-in, absent one
    """

    name = "npu"
    sample_bits = 8
    min_entropy = 4.0

    @property
    def reason(self):
        """Why it is absent: no CANN API exposes the NPU's TRNG (a subclass returns None).

        >>> NpuSource().reason
        "no CANN API exposes the NPU's TRNG"
        """
        return "no CANN API exposes the NPU's TRNG"

    def _read(self, n):
        raise SourceError(f"entropy source 'npu' is not available: {self.reason}",
                          source=self.name)


def _builtin_sources():
    return {s.name: s for s in (RdseedSource(), RdrandSource(), RndrrsSource(), HwrngSource(),
                                GetrandomSource(), NpuSource())}


_REGISTRY = _builtin_sources()


def _validate(obj):
    """``obj`` if it has the four members of a source, else a TypeError/ValueError saying which."""
    what = f"entropy source {obj!r}"
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError(f"{what} needs a non-empty str 'name', got {name!r}")
    bits = getattr(obj, "sample_bits", None)
    if isinstance(bits, bool) or not isinstance(bits, numbers.Integral):
        raise TypeError(f"{what} needs an int 'sample_bits', got {bits!r}")
    if bits not in SAMPLE_BITS:
        raise ValueError(f"{what}: sample_bits must be one of {SAMPLE_BITS}, got {bits}")
    h = getattr(obj, "min_entropy", None)
    if isinstance(h, bool) or not isinstance(h, numbers.Real):
        raise TypeError(f"{what} needs a real 'min_entropy' (bits per sample), got {h!r}")
    if not 0 < float(h) <= bits:
        raise ValueError(f"{what}: min_entropy must be in (0, sample_bits = {bits}], got {h}")
    if float(h) < MIN_ENTROPY_FLOOR:  # health.py says why the floor
        raise ValueError(f"{what}: min_entropy must be in [{FLOOR_TEXT}, sample_bits = {bits}] "
                         f"(MIN_ENTROPY_FLOOR = {FLOOR_TEXT}), got {h}")
    if not callable(getattr(obj, "read", None)):
        raise TypeError(f"{what} needs a callable 'read(n) -> bytes'")
    return obj


def register(source, replace=False):
    """Make ``source`` (an object with the four members) resolvable by its name; returns it.

    A name already registered (the built-ins included) needs ``replace=True``;
    that is how a real NPU TRNG replaces the absent ``npu`` placeholder.

    >>> register(GetrandomSource(), replace=True).name
    'getrandom'
    """
    _validate(source)
    if source.name == "auto":
        raise ValueError("'auto' is reserved for resolve(); choose another source name")
    if source.name in _REGISTRY and not replace:
        raise ValueError(f"an entropy source named {source.name!r} is already registered "
                         "(pass replace=True to replace it)")
    _REGISTRY[source.name] = source
    return source


def _describe(source):
    if hasattr(source, "describe"):
        return source.describe()
    return {"available": bool(getattr(source, "available", True)),
            "reason": getattr(source, "reason", None), "sample_bits": source.sample_bits,
            "min_entropy": source.min_entropy, "seed_grade": getattr(source, "seed_grade", True)}


def sources():
    """{name: {"available", "reason", "sample_bits", "min_entropy", "seed_grade", ...}}.

    >>> info = sources()
    >>> info["getrandom"]["available"], info["npu"]["reason"]
    (True, "no CANN API exposes the NPU's TRNG")
    """
    return {name: _describe(src) for name, src in _REGISTRY.items()}


def resolve(source="auto"):
    """The source object for ``source``: "auto", a registered name, or a source object.

    "auto" picks the first available of rdseed, rndrrs, hwrng, getrandom (its
    ``name`` says which).  A name of an absent source raises SourceError with
    the reason; an unknown name, ValueError; an object is checked for the four
    members (TypeError/ValueError naming what is wrong) and returned as is.

    >>> resolve("getrandom").name
    'getrandom'
    """
    if isinstance(source, str):
        if source == "auto":
            for name in AUTO_ORDER:
                candidate = _REGISTRY[name]
                if getattr(candidate, "available", True):
                    return candidate
            raise SourceError("no entropy source is available (getrandom should always be)",
                              source="auto")
        if source not in _REGISTRY:
            raise ValueError(f"unknown entropy source {source!r}; known: "
                             f"{sorted(_REGISTRY)} or 'auto'")
        chosen = _REGISTRY[source]
        if not getattr(chosen, "available", True):
            raise SourceError(f"entropy source {source!r} is not available: "
                              f"{getattr(chosen, 'reason', None)}", source=source)
        return chosen
    if source is None:
        raise TypeError("source must be 'auto', a source name or a source object, not None")
    _validate(source)
    if getattr(source, "available", True) is False:
        raise SourceError(f"entropy source {source.name!r} is not available: "
                          f"{getattr(source, 'reason', None)}", source=source.name)
    return source
