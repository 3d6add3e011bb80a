"""HMAC_DRBG (NIST SP 800-90A Rev. 1, section 10.1.2) with HMAC-SHA-256.

The primitive is the standard library's HMAC-SHA-256 (``hmac.digest``); this module
writes only the DRBG's state machine: instantiate, generate, reseed, the reseed
counter and the per-request limit.  No prediction resistance: the caller (the entropy
pool) reseeds at its own interval and after fork.

The construction is checked against NIST CAVP's HMAC_DRBG.rsp known answers
(tests/data/hmac_drbg_sha256.rsp).
"""

import hmac

from .._validate import integer

# SP 800-90A Table 2 (HMAC_DRBG, SHA-256).
SECURITY_STRENGTH = 256  # bits
OUTLEN = 32  # bytes: one HMAC-SHA-256 output
MIN_ENTROPY_BYTES = SECURITY_STRENGTH // 8  # entropy input: at least the security strength
MIN_NONCE_BYTES = SECURITY_STRENGTH // 16  # nonce: at least half the security strength
MAX_INPUT_BYTES = 2**32  # max_length and max_personalization/additional_input: 2**35 bits
MAX_BYTES_PER_REQUEST = 2**16  # max_number_of_bits_per_request: 2**19 bits
MAX_RESEED_INTERVAL = 2**48  # reseed_interval: at most 2**48 requests


class ReseedRequired(RuntimeError):
    """generate() was called after ``reseed_interval`` requests: reseed first (SP 800-90A 9.3.1)."""


def check_request(n, drbg):
    """``n`` checked as one request's byte count (SP 800-90A: at most 2**19 bits);
    ``ReseedRequired`` naming ``drbg.name`` once its reseed interval is used up."""
    n = integer(n, "n")
    if not 0 <= n <= MAX_BYTES_PER_REQUEST:
        raise ValueError(f"n must be in [0, {MAX_BYTES_PER_REQUEST}] bytes per request, got {n}")
    if drbg.reseed_required:
        raise ReseedRequired(
            f"{drbg.name} served its {drbg.reseed_interval} requests since the last reseed; reseed it"
        )
    return n


def _hmac(key, data):
    return hmac.digest(key, data, "sha256")


def _bytes_arg(value, name, minimum=0):
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be bytes, got {type(value).__name__}")
    value = bytes(value)
    if len(value) < minimum:
        raise ValueError(f"{name} must hold at least {minimum} bytes, got {len(value)}")
    if len(value) > MAX_INPUT_BYTES:
        raise ValueError(f"{name} must hold at most 2**32 bytes, got {len(value)}")
    return value


class HmacDrbg:
    """SP 800-90A HMAC_DRBG over HMAC-SHA-256, without prediction resistance.

    ``entropy_input`` (at least 32 bytes of full entropy) and ``nonce`` (at least 16
    bytes) seed it; ``personalization`` separates instances.  ``generate(n)`` returns
    at most 65536 bytes per request; after ``reseed_interval`` requests it raises
    ``ReseedRequired`` until ``reseed()`` is called.

    >>> d = HmacDrbg(bytes(32), bytes(16))
    >>> len(d.generate(40)), d.reseed_counter
    (40, 2)
    >>> d.generate(8) == HmacDrbg(bytes(32), bytes(16)).generate(8)
    False
    """

    name = "HMAC_DRBG"  # in ReseedRequired's message

    __slots__ = ("_key", "_v", "reseed_counter", "reseed_interval")

    def __init__(self, entropy_input, nonce, personalization=b"", reseed_interval=MAX_RESEED_INTERVAL):
        interval = integer(reseed_interval, "reseed_interval")
        if not 1 <= interval <= MAX_RESEED_INTERVAL:
            raise ValueError(f"reseed_interval must be in [1, 2**48], got {interval}")
        self.reseed_interval = interval
        seed_material = (
            _bytes_arg(entropy_input, "entropy_input", MIN_ENTROPY_BYTES)
            + _bytes_arg(nonce, "nonce", MIN_NONCE_BYTES)
            + _bytes_arg(personalization, "personalization")
        )
        # 10.1.2.3: Key = 0x00 00...00, V = 0x01 01...01, then Update(seed_material).
        self._key = b"\x00" * OUTLEN
        self._v = b"\x01" * OUTLEN
        self._update(seed_material)
        self.reseed_counter = 1

    def _update(self, provided_data):
        # 10.1.2.2: HMAC_DRBG_Update; the second round runs only with provided data.
        self._key = _hmac(self._key, self._v + b"\x00" + provided_data)
        self._v = _hmac(self._key, self._v)
        if provided_data:
            self._key = _hmac(self._key, self._v + b"\x01" + provided_data)
            self._v = _hmac(self._key, self._v)

    def reseed(self, entropy_input, additional_input=b""):
        """Mix fresh ``entropy_input`` (at least 32 bytes) into the state (10.1.2.4).

        >>> d = HmacDrbg(bytes(32), bytes(16), reseed_interval=1)
        >>> _ = d.generate(4); d.reseed(bytes(32)); d.reseed_counter
        1
        """
        seed_material = _bytes_arg(entropy_input, "entropy_input", MIN_ENTROPY_BYTES) + _bytes_arg(
            additional_input, "additional_input"
        )
        self._update(seed_material)
        self.reseed_counter = 1

    @property
    def reseed_required(self):
        """True when the next generate() would exceed the reseed interval.

        >>> d = HmacDrbg(bytes(32), bytes(16), reseed_interval=1)
        >>> d.reseed_required
        False
        >>> _ = d.generate(4)
        >>> d.reseed_required
        True
        """
        return self.reseed_counter > self.reseed_interval

    def generate(self, n, additional_input=b""):
        """``n`` pseudorandom bytes, 0 <= n <= 65536 (10.1.2.5).

        >>> HmacDrbg(bytes(32), bytes(16)).generate(0)
        b''
        >>> HmacDrbg(bytes(32), bytes(16)).generate(16).hex()  # deterministic in its inputs
        '0bdb4ee263c00592f9c132acffb9793e'
        >>> HmacDrbg(bytes(32), bytes(16), personalization=b"rank 1").generate(16).hex()
        'f74686154bd37ac280fdc3278e444c41'
        """
        additional_input = _bytes_arg(additional_input, "additional_input")
        n = check_request(n, self)
        if additional_input:
            self._update(additional_input)
        # V = HMAC(Key, V) per block; the keyed HMAC state is set up once and copied.
        keyed = hmac.new(self._key, digestmod="sha256")
        v = self._v
        blocks = []
        for _ in range(-(-n // OUTLEN)):
            h = keyed.copy()
            h.update(v)
            v = h.digest()
            blocks.append(v)
        self._v = v
        self._update(additional_input)
        self.reseed_counter += 1
        return b"".join(blocks)[:n]
