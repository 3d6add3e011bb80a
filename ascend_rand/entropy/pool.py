"""The entropy pool: health-tested, conditioned bytes from a hardware source.

Path of every byte: the source's raw samples -> SP 800-90B health tests (health.py) ->
SHA-256 conditioning over input carrying twice the output's entropy (SP 800-90B
3.1.5) -> the caller, in ``mode="raw"``; in ``mode="drbg"`` those conditioned bytes
seed a DRBG that produces the output and is reseeded every ``reseed_interval`` requests
and after fork: CTR_DRBG over AES-256 (ctr_drbg.py) when the optional ``cryptography``
package is importable, else HMAC_DRBG over SHA-256 (drbg.py).  docs/security.md is the threat model.
"""

import hashlib
import math
import os
import threading
import time
import weakref
from fractions import Fraction

from .._validate import integer
from ..backend import native as _native_backend
from . import ctr_drbg
from .drbg import MAX_BYTES_PER_REQUEST, MAX_RESEED_INTERVAL, MIN_ENTROPY_BYTES, MIN_NONCE_BYTES, HmacDrbg
from .errors import EntropyError
from .health import STARTUP_SAMPLES, HealthTests, samples_from_bytes
from .reserve import new_reserve

MODES = ("raw", "drbg")
DRBG_KINDS = ("auto", "ctr", "hmac")
# The names stats() reports for the DRBG in use.
DRBG_NAMES = {"ctr": "CTR_DRBG(AES-256, no df)", "hmac": "HMAC_DRBG(SHA-256)"}
CONDITIONED_BYTES = 32  # one SHA-256 output
# SP 800-90B 3.1.5.1.2: a vetted conditioner's output has full entropy when its input
# carries at least twice the output length in (claimed) min-entropy.
CONDITIONER_INPUT_BITS = 2 * 8 * CONDITIONED_BYTES
# Raw samples per health-tested block: small enough that TRIP_LIMIT consecutive discarded
# blocks of a healthy source are negligible (docs/security.md), large enough to batch.
BLOCK_SAMPLES = 2**14
DEFAULT_RESEED_INTERVAL = 2**10  # DRBG requests (each at most 64 KiB) between reseeds
LOW_WATER = 4096  # the background thread refills when fewer conditioned bytes are left
# Reads of at most SMALL_READ bytes are served from the output reserve in one native call;
# in drbg mode the reserve is refilled with one DRBG request of DRBG_CHUNK bytes.
SMALL_READ = 256
DRBG_CHUNK = 4096

# os.fork() waits at most this long in all for the pools' locks (docs/security.md, "Fork
# and threads").  The lock is never held across a source read, only for short work in
# memory, so it is free at once but under heavy contention; the child does not depend
# on having it.
FORK_LOCK_WAIT = 0.25

_POOLS = weakref.WeakSet()  # every live pool, for the fork handlers
_HELD = []  # pools whose locks the parent holds across fork()
_GUARDS = {}  # process key -> the lock that serializes a pool's reset in that process


def _process_key():
    """What tells this process from its parent, however it forked: the process id and,
    with the native core, the reserve's fork generation (csrc/entropy/reserve.h: a
    pthread_atfork child handler advances it, so fork() from C counts too).

    Read without any lock, so a child forked while another thread held one can tell.
    """
    module = _native_backend.extension()
    generation = module.fork_generation() if module is not None and hasattr(module, "fork_generation") else 0
    return os.getpid(), generation


def _process_guard(key):
    """A lock of this process alone: made in it, so no thread of a parent can hold it."""
    guard = _GUARDS.get(key)
    if guard is None:
        guard = _GUARDS.setdefault(key, threading.Lock())  # atomic: racing threads share one
        for other in [k for k in _GUARDS if k != key]:  # an ancestor's, never used here
            _GUARDS.pop(other, None)
    return guard


def _count(n, name="n"):
    n = integer(n, name)
    if n < 0:
        raise ValueError(f"{name} must be >= 0, got {n}")
    return n


def _check_source(source):
    missing = [m for m in ("name", "sample_bits", "min_entropy", "read") if not hasattr(source, m)]
    if missing:
        raise TypeError(
            f"an entropy source needs name, sample_bits, min_entropy and read(n); {source!r} lacks {', '.join(missing)}"
        )
    if not callable(source.read):
        raise TypeError(f"the source's read must be callable, got {source.read!r}")
    return source


def _resolve(source):
    if isinstance(source, str):
        from .sources import resolve  # the hardware sources (sources.py)

        return _check_source(resolve(source))
    return _check_source(source)


def samples_per_output(min_entropy, sample_bits):
    """Raw samples hashed into one 32-byte output: at least 512 bits of claimed entropy,
    rounded up to whole bytes of input."""
    spo = math.ceil(Fraction(CONDITIONER_INPUT_BITS) / Fraction(float(min_entropy)))
    per_byte = 8 // math.gcd(8, sample_bits)  # samples that fill whole bytes
    return -(-spo // per_byte) * per_byte


class EntropyPool:
    """Health-tested, conditioned secure random bytes from an entropy source.

    ``source``: "auto" (the best hardware source present, else getrandom), a source
    name, or any object with ``name``, ``sample_bits``, ``min_entropy`` and
    ``read(n) -> bytes``.  ``mode="raw"``: every output byte comes from the SHA-256
    conditioner over health-tested samples carrying twice its entropy (for keys and
    seeds).  ``mode="drbg"``: a DRBG seeded and reseeded (every ``reseed_interval``
    requests of at most 64 KiB, and after fork) from those bytes, for volume.
    ``drbg``: "auto" (CTR_DRBG over AES-256 when the optional ``cryptography`` package
    is importable, else HMAC_DRBG over SHA-256), "ctr" or "hmac"; ``stats()["drbg"]``
    names the one in use.  ``background=True`` refills in a daemon thread.

    Thread-safe; no two calls, threads or forked processes get the same bytes.  After a
    persistent health-test failure every call raises ``EntropyError`` until ``reset()``.

    >>> import os
    >>> class Urandom:
    ...     name, sample_bits, min_entropy = "urandom", 8, 8.0
    ...     def read(self, n):
    ...         return os.urandom(n)
    >>> pool = EntropyPool(Urandom())
    >>> len(pool.read(16)), 0 <= pool.secure_seed() < 2**64
    (16, True)
    >>> s = pool.stats(); s["source"], s["bytes_produced"]
    ('urandom', 24)
    """

    def __init__(
        self, source="auto", mode="raw", reseed_interval=DEFAULT_RESEED_INTERVAL, background=False, drbg="auto"
    ):
        if not isinstance(mode, str) or mode not in MODES:
            raise ValueError(f"mode must be 'raw' or 'drbg', got {mode!r}")
        if not isinstance(drbg, str) or drbg not in DRBG_KINDS:
            raise ValueError(f"drbg must be 'auto', 'ctr' or 'hmac', got {drbg!r}")
        if drbg == "auto":
            drbg = "ctr" if ctr_drbg.AVAILABLE else "hmac"
        elif drbg == "ctr" and not ctr_drbg.AVAILABLE:
            raise ImportError(
                "drbg='ctr' needs the 'cryptography' package (pip install 'ascend_rand[secure]'); "
                "use drbg='auto' or 'hmac' without it"
            )
        interval = integer(reseed_interval, "reseed_interval")
        if not 1 <= interval <= MAX_RESEED_INTERVAL:
            raise ValueError(f"reseed_interval must be in [1, 2**48] DRBG requests, got {interval}")
        if not isinstance(background, bool):
            raise TypeError(f"background must be True or False, got {background!r}")
        self._source = _resolve(source)
        self.mode = mode
        self.drbg = drbg
        self.reseed_interval = interval
        self.background = background
        self._health = HealthTests(str(self._source.name), self._source.sample_bits, self._source.min_entropy)
        bits = self._health.sample_bits
        spo = samples_per_output(self._health.min_entropy, bits)
        align = math.lcm(spo, self._health.window)  # whole APT windows per block, if not huge
        if align > BLOCK_SAMPLES:
            align = spo
        self._block_samples = align * max(1, BLOCK_SAMPLES // align)
        self._block_bytes = self._block_samples * bits // 8
        self._input_bytes = spo * bits // 8  # raw bytes per conditioned output
        self._startup_bytes = STARTUP_SAMPLES * bits // 8
        self._counts = {"bytes_produced": 0, "raw_bytes_read": 0, "reseeds": 0}
        self._init_process_state()
        _POOLS.add(self)

    def _init_process_state(self):
        # What a forked child must not share with its parent: locks, buffered bytes, the
        # DRBG's state, the background thread.
        #
        # Three locks, always taken in this order, none while holding a later one:
        # _drbg_lock (one DRBG user at a time: seeding, reseeding, a request), then
        # _source_lock (one source reader at a time, so the health tests see the samples
        # in the order read), then _lock (the state: health tests, reserves, DRBG, counts).
        # _lock is held only for short work in memory, never across a source read, so
        # that os.fork() (which takes it, _before_fork) never waits on the source.
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._source_lock = threading.Lock()
        self._drbg_lock = threading.Lock()
        # _conditioned: health-tested, conditioned bytes (raw-mode output, DRBG seeds);
        # _ready: the bytes read() hands out (the same reserve in raw mode; DRBG output,
        # in chunks, in drbg mode).  Reserves forget their bytes in a forked child.
        self._conditioned = new_reserve()
        self._ready = self._conditioned if self.mode == "raw" else new_reserve()
        self._drbg = None
        self._thread = None
        self._stop = threading.Event()
        self._key = _process_key()  # last: a thread that sees this key sees the state above

    def _check_process(self):
        """Reset the pool in a forked child that no fork hook has reset (fork() from C).

        Runs before any of the pool's locks is taken: in such a child they may be held
        by threads of the parent that do not exist here (a background refill), and
        would never be released.
        """
        key = _process_key()
        if self._key != key:
            with _process_guard(key):
                if self._key != key:  # another thread of this child may have reset it
                    self._after_fork()

    @property
    def source(self):
        """The source object this pool reads.

        >>> from ascend_rand.entropy import EntropyPool
        >>> EntropyPool("getrandom").source
        <GetrandomSource 'getrandom' 8-bit samples, 8.0 bits claimed, available>
        """
        return self._source

    @property
    def source_name(self):
        """The source's name.

        >>> from ascend_rand.entropy import EntropyPool, resolve
        >>> EntropyPool("getrandom").source_name
        'getrandom'
        >>> EntropyPool("auto").source_name == resolve("auto").name
        True
        """
        return self._health.source_name

    def __repr__(self):
        return f"EntropyPool(source={self.source_name!r}, mode={self.mode!r})"

    # ------------------------------------------------------------ raw side

    # Called with _source_lock held and _lock not held.

    def _read_source(self, n):
        try:
            data = self._source.read(n)
        except EntropyError:
            raise
        except Exception as exc:  # the source's own failure (e.g. RDSEED out of retries)
            raise EntropyError(
                f"entropy source {self.source_name!r} could not be read: {exc}", source=self.source_name
            ) from exc
        if not isinstance(data, (bytes, bytearray)) or len(data) != n:
            got = f"{len(data)} bytes" if isinstance(data, (bytes, bytearray)) else type(data).__name__
            raise EntropyError(
                f"entropy source {self.source_name!r} returned {got} when asked for {n} bytes",
                source=self.source_name,
            )
        self._counts["raw_bytes_read"] += n
        return bytes(data)

    def _ensure_started(self):
        # (_source_lock held.)  Each failed attempt counts as a discarded block;
        # TRIP_LIMIT of them in a row fail the source, so this loop ends.
        with self._lock:
            self._health.raise_if_failed()
            started = self._health.started
        while not started:
            data = self._read_source(self._startup_bytes)  # no _lock: a fork must not wait on it
            with self._lock:
                started = self._health.startup(samples_from_bytes(data, self._health.sample_bits))

    def _refill(self, want=0):
        """Append one health-tested, conditioned block to the conditioned reserve, unless
        it holds ``want`` bytes by the time this thread's turn at the source comes.

        The source is read holding only _source_lock; the pool's lock is taken for the
        health tests and the put.  On any EntropyError every byte the pool holds is
        dropped first, so that no byte derived from before a failure is handed out after it.
        """
        with self._source_lock:
            if want and self._conditioned.available >= want:
                return  # another thread refilled while this one waited for the source
            try:
                self._ensure_started()
                while True:  # ends: discarded blocks fail the source after TRIP_LIMIT in a row
                    data = self._read_source(self._block_bytes)
                    with self._lock:
                        if self._health.check(samples_from_bytes(data, self._health.sample_bits)):
                            break
            except EntropyError:
                with self._lock:
                    self._drop()
                raise
            view = memoryview(data)
            step = self._input_bytes
            block = bytearray(b"".join(hashlib.sha256(view[i : i + step]).digest() for i in range(0, len(data), step)))
            with self._lock:
                self._conditioned.put(block)
            block[:] = bytes(len(block))

    def _take_conditioned(self, n):
        # One take of all n bytes, so that a read is a contiguous piece of the conditioned
        # stream even while lock-free small reads take bytes between refills.  Called
        # without _lock (a refill reads the source).
        while True:
            with self._lock:
                self._health.raise_if_failed()
                out = self._conditioned.take(n)
            if out is not None:
                return out
            self._refill(n)

    def _drop(self):
        # (_lock held.)
        self._conditioned.clear()
        self._ready.clear()
        self._drbg = None

    # ------------------------------------------------------------ DRBG side

    def _personalization(self):
        # Not secret: separates this instance and process from every other one.
        return b"ascend_rand.EntropyPool" + os.getpid().to_bytes(8, "little") + time.time_ns().to_bytes(8, "little")

    def _seed_bytes_needed(self):
        # (_lock held.)  Conditioned bytes the DRBG needs before its next request: to be
        # instantiated, reseeded, or none.
        if self._drbg is None:
            if self.drbg == "ctr":
                return ctr_drbg.ENTROPY_BYTES
            return MIN_ENTROPY_BYTES + MIN_NONCE_BYTES
        if self._drbg.reseed_required:
            return ctr_drbg.ENTROPY_BYTES if self.drbg == "ctr" else MIN_ENTROPY_BYTES
        return 0

    def _seed_drbg(self, seed):
        # (_lock held.)  seed: _seed_bytes_needed() conditioned bytes.
        if self._drbg is None:
            if self.drbg == "ctr":
                # No derivation function: the entropy input is seedlen (48) full-entropy
                # bytes, which the conditioned bytes are; no nonce.
                self._drbg = ctr_drbg.CtrDrbg(seed, self._personalization(), self.reseed_interval)
            else:
                self._drbg = HmacDrbg(
                    seed[:MIN_ENTROPY_BYTES], seed[MIN_ENTROPY_BYTES:], self._personalization(), self.reseed_interval
                )
        else:
            self._drbg.reseed(seed)
            self._counts["reseeds"] += 1

    def _drbg_generate(self, n, into_ready=False):
        """One DRBG request of ``n`` bytes (at most 64 KiB), seeding or reseeding first
        when due; ``into_ready``: put the output in the reserve instead of returning it.

        The seed is taken (and the source read, when the conditioned bytes are short)
        holding only _drbg_lock; the request itself runs under _lock, after a failure
        check, so that no output made before a failure is handed out after it.
        """
        with self._drbg_lock:
            while True:
                with self._lock:
                    self._health.raise_if_failed()
                    need = self._seed_bytes_needed()
                seed = self._take_conditioned(need) if need else None
                with self._lock:
                    self._health.raise_if_failed()
                    if need != self._seed_bytes_needed():
                        continue  # reset() dropped the DRBG meanwhile: this seed is for another state
                    if seed is not None:
                        self._seed_drbg(seed)
                    out = self._drbg.generate(n)
                    if into_ready:
                        self._ready.put(out)
                        return None
                    return out

    # ------------------------------------------------------------ public

    def _after_fork(self):
        # In a forked child: nothing of the parent's in-process state is used or waited
        # on.  Fresh locks (the parent's may be held by its threads), no buffered bytes,
        # no DRBG state, no background thread; the health tests start again with the
        # start-up test on the child's own samples (they may have been mid-block in the
        # parent), keeping their counters and a persistent failure.
        self._counts["bytes_produced"] += self._ready.taken  # the parent's, up to the fork
        self._health.restart()
        self._init_process_state()

    def read(self, n):
        """``n`` secure random bytes, never handed out before (to any thread or process).

        >>> from ascend_rand.entropy import EntropyPool
        >>> pool = EntropyPool("getrandom")
        >>> a, b = pool.read(32), pool.read(32)
        >>> len(a), a != b
        (32, True)

        Raises ``EntropyError`` when the source has failed its health tests.
        """
        # Small reads: one native call takes the bytes from the output reserve, without
        # the lock (the call is atomic).  The reserve is empty after a failure (_refill
        # drops it) and in a forked child, so those cases take the general path.
        if type(n) is int and 0 < n <= SMALL_READ:
            out = self._ready.take(n)
            if out is not None:
                return out
        return self._read(_count(n))

    def _read(self, n):
        self._check_process()  # a fork that bypassed os.register_at_fork: before any lock
        with self._lock:
            self._health.raise_if_failed()
        if n == 0:
            return b""
        if self.mode == "raw":
            out = self._take_conditioned(n)  # counted by the reserve
        elif n <= SMALL_READ:
            # One DRBG request refills the reserve for many small reads.
            while (out := self._ready.take(n)) is None:
                self._drbg_generate(DRBG_CHUNK, into_ready=True)
        else:
            out = b"".join(
                self._drbg_generate(min(MAX_BYTES_PER_REQUEST, n - i)) for i in range(0, n, MAX_BYTES_PER_REQUEST)
            )
            with self._lock:
                self._counts["bytes_produced"] += n
        if self.background:
            with self._lock:
                self._wake_background()
        return out

    def token_bytes(self, n=32):
        """``n`` secure random bytes (32 by default), like ``secrets.token_bytes``.

        >>> from ascend_rand.entropy import EntropyPool
        >>> pool = EntropyPool("getrandom", mode="drbg")
        >>> len(pool.token_bytes()), len(pool.token_bytes(5))
        (32, 5)
        """
        return self.read(n)

    def secure_seed(self):
        """A 64-bit seed (a Python int in [0, 2**64)) for Generator, MT19937, SeedManager.

        >>> import ascend_rand as ar
        >>> from ascend_rand.entropy import EntropyPool
        >>> seed = EntropyPool("getrandom").secure_seed()
        >>> type(seed).__name__, 0 <= seed < 2**64
        ('int', True)
        >>> ar.Generator(seed).seed == seed  # log it: the run can then be repeated
        True
        """
        return int.from_bytes(self.read(8), "little")

    def stats(self):
        """Counters: bytes produced, raw bytes read and samples tested, failures, reseeds;
        ``"drbg"`` names the DRBG in use in drbg mode (None in raw mode).

        >>> from ascend_rand.entropy import EntropyPool
        >>> pool = EntropyPool("getrandom", mode="drbg", drbg="hmac")
        >>> _ = pool.read(100)
        >>> s = pool.stats()
        >>> s["source"], s["mode"], s["drbg"], s["bytes_produced"], s["failed"]
        ('getrandom', 'drbg', 'HMAC_DRBG(SHA-256)', 100, False)
        """
        self._check_process()
        with self._lock:
            h = self._health.stats
            return {
                "source": self.source_name,
                "mode": self.mode,
                "drbg": DRBG_NAMES[self.drbg] if self.mode == "drbg" else None,
                "sample_bits": self._health.sample_bits,
                "min_entropy": self._health.min_entropy,
                "bytes_produced": self._counts["bytes_produced"] + self._ready.taken,
                "raw_bytes_read": self._counts["raw_bytes_read"],
                "raw_samples_tested": h["samples_tested"],
                "intermittent_failures": h["intermittent_failures"],
                "blocks_discarded": h["blocks_discarded"],
                "persistent_failures": h["persistent_failures"],
                "startup_tests": h["startup_tests"],
                "reseeds": self._counts["reseeds"],
                "failed": self._health.failed,
            }

    def reset(self):
        """Clear a failure and run the start-up test again on fresh samples.

        Drops buffered bytes and the DRBG state.  Raises ``EntropyError`` if the source
        fails again.

        >>> from ascend_rand.entropy import EntropyPool
        >>> pool = EntropyPool("getrandom")
        >>> _ = pool.read(8)
        >>> pool.reset()
        >>> pool.stats()["startup_tests"]  # the start-up test ran again
        2
        """
        self._check_process()
        with self._source_lock:  # no refill runs meanwhile; the source is read without _lock
            with self._lock:
                self._health.reset()
                self._drop()
            self._ensure_started()

    # ------------------------------------------------------------ background refill

    def _wake_background(self):
        if self._thread is None or not self._thread.is_alive():
            self._stop = threading.Event()
            self._thread = threading.Thread(
                target=_background_loop, args=(weakref.ref(self), self._stop), name="ascend_rand-entropy", daemon=True
            )
            self._thread.start()
        elif self._conditioned.available < LOW_WATER:
            self._cond.notify()

    def start_background(self):
        """Start the background refill thread now (``background=True`` starts it on first read).

        >>> from ascend_rand.entropy import EntropyPool
        >>> pool = EntropyPool("getrandom")
        >>> pool.start_background()
        >>> pool.background, len(pool.read(16))
        (True, 16)
        >>> pool.close()
        """
        self._check_process()
        with self._lock:
            self.background = True
            self._wake_background()

    def close(self):
        """Stop the background thread, if any.  Reading again restarts it.

        >>> from ascend_rand.entropy import EntropyPool
        >>> pool = EntropyPool("getrandom", background=True)
        >>> len(pool.read(16))
        16
        >>> pool.close()
        >>> len(pool.read(16))  # still usable after close
        16
        >>> pool.close()
        """
        self._check_process()
        with self._lock:
            self._stop.set()
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)


def _background_loop(ref, stop):
    # Holds the pool only while refilling or waiting, so an unreferenced pool is collected
    # and its thread ends.  Errors end the thread; the next read() meets them again.  The
    # refill runs outside the pool's lock: its source read holds only _source_lock.
    while not stop.is_set():
        pool = ref()
        if pool is None:
            return
        with pool._cond:
            if stop.is_set() or pool._health.failed:
                return
            low = pool._conditioned.available < LOW_WATER
            if not low:
                pool._cond.wait(timeout=0.5)
        if low:
            try:
                pool._refill(LOW_WATER)
            except Exception:
                return
        del pool


def _before_fork():
    # Take every pool's lock, so that no pool is half-updated in the child, but wait at
    # most FORK_LOCK_WAIT in all: the lock guards only short work in memory (never a
    # source read), and the child starts afresh without it (_after_fork).
    key = _process_key()
    deadline = time.monotonic() + FORK_LOCK_WAIT
    held = []
    for pool in list(_POOLS):
        if pool._key != key:
            continue  # not reset since a fork from C: its locks are not this process's
        if pool._lock.acquire(timeout=max(0.0, deadline - time.monotonic())):
            held.append(pool)
    _HELD[:] = held


def _after_fork_in_parent():
    for pool in _HELD:
        pool._lock.release()
    _HELD.clear()


def _after_fork_in_child():
    # The child must not reuse a byte or a DRBG state of the parent's: drop them, with
    # fresh locks (the parent's may be held) and no background thread (it did not survive).
    _HELD.clear()
    for pool in list(_POOLS):
        pool._after_fork()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)

_DEFAULT = None


def default_pool():
    """The process's shared pool: ``EntropyPool("auto", mode="raw")``, made on first use.

    >>> from ascend_rand.entropy import default_pool
    >>> default_pool() is default_pool(), default_pool().mode
    (True, 'raw')
    """
    global _DEFAULT
    pool = _DEFAULT
    if pool is not None:  # no lock once it exists
        return pool
    with _process_guard(_process_key()):  # this process's own lock: never held by a parent's thread
        if _DEFAULT is None:
            _DEFAULT = EntropyPool("auto", mode="raw")
        return _DEFAULT


def secure_seed():
    """A 64-bit seed from the default pool's health-tested hardware entropy.

    For ``Generator(seed=None)`` and other non-reproducible runs; the pool reads the
    best hardware source present (docs/security.md).

    >>> from ascend_rand.entropy import secure_seed
    >>> a, b = secure_seed(), secure_seed()
    >>> 0 <= a < 2**64, a != b
    (True, True)
    """
    return default_pool().secure_seed()
